package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// errParse marks a body that is not JSON; the MCP layer would answer it
// with a parse error, and so does the middleware.
var errParse = errors.New("parse error")

// toolScopes reads the POST body to find the tools/call requests in it and
// returns the scopes their tools need, then puts the body back for the MCP
// layer.
//
// The reading over-approximates on purpose, so that no difference between
// this reader and the MCP layer's own parser can let a call through
// unchecked: a message counts as a tools/call if any member whose key
// matches "method" in any letter case is "tools/call", and then every
// string under a key matching "name" in any "params" member counts as a
// tool it calls, duplicates included. A legitimate client sends one exact
// "method" and one exact "name", and gets exactly its tool's scopes.
func (a *Authenticator) toolScopes(w http.ResponseWriter, r *http.Request) ([]string, int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", a.maxBody)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !json.Valid(body) {
		return nil, http.StatusBadRequest, errParse
	}

	var msgs []json.RawMessage
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		// A batch (2025-03-26): every tools/call in it must be allowed.
		if err := json.Unmarshal(trimmed, &msgs); err != nil {
			return nil, http.StatusBadRequest, errParse
		}
	} else {
		msgs = []json.RawMessage{trimmed}
	}
	var need []string
	for _, m := range msgs {
		for _, tool := range calledTools(m) {
			need = union(need, a.oauth.cfg.ToolScopes[tool])
		}
	}
	return need, 0, nil
}

// calledTools returns every tool name msg could be calling; see
// toolScopes for the rules.
func calledTools(msg json.RawMessage) []string {
	top, ok := members(msg)
	if !ok {
		return nil
	}
	isCall := false
	for _, m := range top {
		var method string
		if strings.EqualFold(m.key, "method") && json.Unmarshal(m.val, &method) == nil && method == "tools/call" {
			isCall = true
		}
	}
	if !isCall {
		return nil
	}
	var names []string
	for _, m := range top {
		if !strings.EqualFold(m.key, "params") {
			continue
		}
		params, ok := members(m.val)
		if !ok {
			continue
		}
		for _, p := range params {
			var name string
			if strings.EqualFold(p.key, "name") && json.Unmarshal(p.val, &name) == nil {
				names = append(names, name)
			}
		}
	}
	return names
}

type member struct {
	key string
	val json.RawMessage
}

// members lists an object's members in order, keeping duplicate keys
// (which decoding into a map or struct would collapse).
func members(data json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := t.(string)
		if !ok {
			return nil, false
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		out = append(out, member{key, val})
	}
	return out, true
}
