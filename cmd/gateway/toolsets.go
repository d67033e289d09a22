package main

import (
	"fmt"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// fileToolsets checks the file's toolsets: and makes them
// gateway.Options.FrontDoor.Toolsets; every error names the line and the key. The
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
		var err error
		if ts.Tools, err = fileTools(ft.Tools, doc, key+".tools"); err != nil {
			return nil, err
		}
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
		for _, s := range ft.RequiredScope {
			if !auth.ValidScope(s) {
				return nil, doc.errorf(key+".required_scope", "%q is not an OAuth scope token (printable ASCII, no spaces, quotes or backslashes)", s)
			}
		}
		out = append(out, ts)
	}
	return out, nil
}

// checkToolsets checks the settings around toolsets that only the whole
// configuration can: --toolsets-only needs toolsets, --stdio-toolset
// needs --stdio and names one of them, and stdio with --toolsets-only
// needs it.
func (c *config) checkToolsets() error {
	named := false
	for _, ts := range c.opts.FrontDoor.Toolsets {
		named = named || ts.Name == c.opts.FrontDoor.StdioToolset
	}
	switch {
	case c.opts.FrontDoor.ToolsetsOnly && len(c.opts.FrontDoor.Toolsets) == 0:
		return settingErrorf("%s needs toolsets (toolsets: in the config file)", flagName("toolsets-only"))
	case c.opts.FrontDoor.StdioToolset != "" && !c.stdio:
		return settingErrorf("%s needs %s", flagName("stdio-toolset"), flagName("stdio"))
	case c.opts.FrontDoor.StdioToolset != "" && !named:
		return settingErrorf("%s %q: no toolset of that name in the config file's toolsets:", flagName("stdio-toolset"), c.opts.FrontDoor.StdioToolset)
	case c.stdio && c.opts.FrontDoor.ToolsetsOnly && c.opts.FrontDoor.StdioToolset == "":
		return settingErrorf("%s with %s needs %s: stdio serves one toolset", flagName("stdio"), flagName("toolsets-only"), flagName("stdio-toolset"))
	}
	return nil
}
