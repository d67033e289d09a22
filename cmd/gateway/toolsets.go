package main

import (
	"fmt"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// fileToolsets checks the file's toolsets: and makes them
// gateway.Options.Toolsets; every error names the line and the key. The
// gateway checks again what only it knows (patterns' meaning, scopes
// against its front door); oauth says whether --oauth-jwks-url is set,
// which required_scope needs.
func fileToolsets(toolsets []fileToolset, doc *configDoc, oauth bool) ([]gateway.Toolset, error) {
	var out []gateway.Toolset
	names := map[string]string{}
	for i, ft := range toolsets {
		key := fmt.Sprintf("toolsets[%d]", i)
		if ft.Name == "" {
			return nil, fmt.Errorf("%s: %s: name is required (the endpoints' path segment: /mcp/NAME)", doc.at(key), key)
		}
		if err := gateway.ValidToolsetName(ft.Name); err != nil {
			return nil, doc.errorf(key+".name", "%w", err)
		}
		if first, dup := names[ft.Name]; dup {
			return nil, doc.errorf(key+".name", "the name %q is used twice (first at %s)", ft.Name, first)
		}
		names[ft.Name] = doc.at(key + ".name")
		ts := gateway.Toolset{Name: ft.Name, Description: ft.Description, Include: ft.Include, Exclude: ft.Exclude, RequiredScopes: ft.RequiredScope}
		if ft.ToolMode != "" {
			if err := ts.ToolMode.UnmarshalText([]byte(ft.ToolMode)); err != nil {
				return nil, doc.errorf(key+".tool_mode", "%w, got %q", err, ft.ToolMode)
			}
		}
		for _, l := range []struct {
			field    string
			patterns []string
		}{{"include", ft.Include}, {"exclude", ft.Exclude}} {
			for j, p := range l.patterns {
				k := fmt.Sprintf("%s.%s[%d]", key, l.field, j)
				if err := methodglob.Check(k, p); err != nil {
					return nil, fmt.Errorf("%s: %w", doc.at(k), err)
				}
			}
		}
		if len(ft.RequiredScope) > 0 && !oauth {
			return nil, doc.errorf(key+".required_scope", "needs --oauth-jwks-url (scopes come from OAuth tokens)")
		}
		out = append(out, ts)
	}
	return out, nil
}
