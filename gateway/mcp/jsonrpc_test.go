package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Error data comes from handlers: it must not break line framing (stdio,
// SSE), and invalid JSON is left out rather than sent.
func TestAppendErrorData(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"{\n  \"field\": \"x\"\r\n}", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m","data":{"field":"x"}}}`},
		{`{"a":1}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m","data":{"a":1}}}`},
		{`{"a":`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}`},
	} {
		got := string(appendError(nil, json.RawMessage("1"), &Error{Code: CodeInvalidParams, Message: "m", Data: json.RawMessage(tc.data)}))
		if got != tc.want {
			t.Errorf("data %q:\n got %s\nwant %s", tc.data, got, tc.want)
		}
	}
}

// Before 2026-07-28 structuredContent must be an object; other values are
// not sent there, and are at 2026-07-28.
func TestStructuredContentShapePerRevision(t *testing.T) {
	s := NewServer(Implementation{Name: "t", Version: "1"}, &fakeHandler{}, nil)
	for _, tc := range []struct {
		version, sc string
		sent        bool
	}{
		{Version20250618, ` {"a":1}`, true},
		{Version20251125, `[1,2]`, false},
		{Version20251125, `"text"`, false},
		{Version20260728, `[1,2]`, true},
		{Version20250326, `{"a":1}`, false},
	} {
		b := s.appendCallResult(nil, &CallToolResult{StructuredContent: json.RawMessage(tc.sc)}, tc.version)
		if got := bytes.Contains(b, []byte(`"structuredContent"`)); got != tc.sent {
			t.Errorf("%s %s: structuredContent sent = %v, want %v (%s)", tc.version, tc.sc, got, tc.sent, b)
		}
	}
}

// A token has one spelling: a non-canonical base64 variant that decodes to
// the same bytes is refused, so it cannot name a second session entry.
func TestSessionTokenCanonical(t *testing.T) {
	k, err := newTokenKeys([]byte(strings.Repeat("k", 32)), nil, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok := k.mint(Version20251125, []byte(`{}`), "sub:alice", now)
	if v, exp, err := k.verify(tok, "sub:alice", now); err != nil || v != Version20251125 || exp.Unix() != now.Add(time.Hour).Unix() {
		t.Fatalf("verify(minted) = %q, %v, %v; want %s, %v", v, exp, err, Version20251125, now.Add(time.Hour))
	}
	// The owner is bound into the MAC: the same token presented by anyone
	// else (anonymous included) does not verify.
	for _, other := range []string{"sub:bob", "", "sub:alic", "sub:alicee"} {
		if _, _, err := k.verify(tok, other, now); err == nil {
			t.Errorf("token of sub:alice verified for %q", other)
		}
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	variant := tok[:len(tok)-1] + string(alphabet[last^1])
	if _, _, err := k.verify(variant, "sub:alice", now); err == nil {
		t.Errorf("non-canonical variant %q of %q verified", variant, tok)
	}
}

// TestDecodeTaskIDs: subscriptions/listen watches at most MaxListenTasks
// (32) distinct task ids, and says what to do with more; duplicates count
// once, an empty id is refused.
func TestDecodeTaskIDs(t *testing.T) {
	ids := func(n int, dup bool) json.RawMessage {
		var l []string
		for i := range n {
			l = append(l, fmt.Sprintf("operations/%d", i))
			if dup {
				l = append(l, fmt.Sprintf("operations/%d", i))
			}
		}
		b, _ := json.Marshal(l)
		return b
	}
	if got, err := decodeTaskIDs(ids(MaxListenTasks, true)); err != nil || len(got) != MaxListenTasks {
		t.Errorf("%d ids, each twice: %d ids, %v", MaxListenTasks, len(got), err)
	}
	if _, err := decodeTaskIDs(ids(MaxListenTasks+1, false)); err == nil || !strings.Contains(err.Error(), "33 task ids, more than the 32 one stream may follow; follow the others on another stream, or poll them with tasks/get") {
		t.Errorf("%d ids: %v, want refused", MaxListenTasks+1, err)
	}
	if _, err := decodeTaskIDs(json.RawMessage(`["a",""]`)); err == nil {
		t.Error("an empty task id was accepted")
	}
	// A hostile array is refused by a scan: nothing of it is decoded.
	huge := json.RawMessage("[" + strings.Repeat(`"a",`, 500_000) + `"a"]`)
	var err error
	allocs := testing.AllocsPerRun(3, func() { _, err = decodeTaskIDs(huge) })
	if err == nil || !strings.Contains(err.Error(), "500001 task ids") || allocs > 10 {
		t.Errorf("500001 ids: %v, %.0f allocations; want refused before decoding", err, allocs)
	}
}

// FuzzScanner checks the envelope decoder against encoding/json: the
// envelope members it picks out are the ones a case-sensitive decoder
// sees. internal/jsonscan's FuzzValid checks the scanner under it.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ` {"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}} `,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"Method":"ping","method":"tools/list","meth\u006fd":"initialize"}`, `{"id":1,"id":2}`,
		`[]`, `1`, `"str"`, `null`, `{"a":1,}`, `{"a" 1}`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m message
		if ok := decodeMessage(data, &m); ok != json.Valid(data) {
			t.Fatalf("decodeMessage ok = %v, json.Valid = %v", ok, !ok)
		} else if !ok {
			return
		}
		var generic map[string]json.RawMessage
		if json.Unmarshal(data, &generic) != nil {
			return // not an object
		}
		for key, got := range map[string]json.RawMessage{"jsonrpc": m.JSONRPC, "id": m.ID, "method": m.Method, "params": m.Params} {
			want, ok := generic[key]
			if ok != (got != nil) || (ok && string(want) != string(got)) {
				t.Fatalf("%s: scanner %q, encoding/json %q", key, got, want)
			}
		}
	})
}

// FuzzAppendString checks appendString against encoding/json, byte for
// byte: quotes, backslashes, control characters, <, >, &, U+2028, U+2029
// and invalid UTF-8 included.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"a":"b\\c"}`, "<a href='x'>&amp;</a>", "tab\tnl\ncr\r\x00\x1f\x7f", "\b\f",
		"\u2028\u2029", "caf\u00e9 \U0001F981", "\xff\xfe bad", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}
