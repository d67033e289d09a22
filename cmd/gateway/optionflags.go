package main

import "strings"

// The library speaks of its options (TLS.CertFile of gateway/backendconn);
// the operator typed flags. inFlagWords restates a library error in flag
// names, so the one message an operator reads names what they can change. Only
// cmd/gateway knows this table; add a row when a library error names an
// option that a flag sets.
var optionFlags = strings.NewReplacer(
	"TLS.Plaintext", "--plaintext",
	"TLS.CAFile", "--backend-ca",
	"TLS.CertFile", "--backend-cert",
	"TLS.KeyFile", "--backend-key",
	"TLS.ServerName", "--backend-server-name",
	"OAuthConfig.JWKSURL", "--oauth-jwks-url",
	"OAuthConfig.Issuer", "--oauth-issuer",
	"OAuthConfig.Audience", "--oauth-audience",
	"OAuthConfig.Resource", "--oauth-resource",
	"OAuthConfig.RequiredScopes", "--oauth-required-scope",
	"OAuthConfig.ToolScopes", "--oauth-tool-scope",
	"Options.StrictScopes", "--strict-scopes",
	"Options.Include", "--include",
	// Before Options.Toolsets, which is a prefix of both.
	"Options.ToolsetsOnly", "--toolsets-only",
	"Options.StdioToolset", "--stdio-toolset",
	"Options.Toolsets", "toolsets",
	"Options.Exclude", "--exclude",
	"Options.CallTimeout", "--call-timeout",
	"Options.StreamTimeout", "--stream-timeout",
	"Options.StreamMaxMessages", "--stream-max-messages",
	"Options.StreamMaxBytes", "--stream-max-bytes",
	// Library log lines name both; an error restated here needs only one.
	"Options.DiscoveryTimeout (gateway: --discovery-timeout)", "--discovery-timeout",
	"Options.DiscoveryTimeout", "--discovery-timeout",
)

// inFlagWords returns err restated in flag names; errors.Is and As still
// see the original.
func inFlagWords(err error) error {
	if err == nil {
		return nil
	}
	msg := optionFlags.Replace(err.Error())
	if msg == err.Error() {
		return err
	}
	return &sourcedError{msg: msg, err: err}
}
