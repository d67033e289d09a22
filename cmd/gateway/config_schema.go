package main

import (
	"reflect"

	"github.com/goccy/go-yaml/ast"
)

// The config file (--config FILE, YAML) can say everything the flags say,
// plus what only makes sense per backend. examples/config/gateway.yaml
// shows every key, and docs/configuration.md (generated from the flag
// set) documents them.
//
// How the file, the command line and the environment combine is in
// config_apply.go; how the file is parsed, in config_decode.go.
//
// Every top-level key but backends:, toolsets: and tools: is a flag's
// name in snake_case, and the file is applied by setting those flags by
// name, so there is no list of keys to keep in step with the flags: a
// new flag is a key at once, parsed by its own Set. Only those three
// have a schema here. Errors name the file, the line and the key:
// "gateway.yaml:7: unknown key "plaintxt" in backends[0]".

// configFile is a parsed config file: its top-level settings in the
// file's order, each a flag's name in snake_case (applyFile sets them
// through the flag set), and its backends, the one key with a schema of
// its own.
type configFile struct {
	doc      *configDoc
	settings []*ast.MappingValueNode
	// backends replaces --backend, with per-backend settings.
	backends []fileBackend
	// toolsets are gateway.Options.FrontDoor.Toolsets.
	toolsets []fileToolset
	// tools are gateway.Options.Catalog.Tools (tools.go).
	tools []fileTool
}

// fileToolset is one entry of toolsets:, served at /mcp/NAME, /ws/NAME
// and /sse/NAME. Each field's help tag is its line in
// docs/configuration.md.
type fileToolset struct {
	Name          string     `yaml:"name" help:"required: the endpoints' path segment (/mcp/NAME, /ws/NAME, /sse/NAME), 1-63 of a-z 0-9 _ -"`
	Description   string     `yaml:"description" help:"the instructions its server sends clients in initialize: what the toolset is for; none by default"`
	Include       []string   `yaml:"include" help:"the tools it holds, by method glob on package.Service/Method as --include takes them (among the tools the gateway exposes); none: all"`
	Exclude       []string   `yaml:"exclude" help:"methods it leaves out, as --exclude"`
	ToolMode      string     `yaml:"tool_mode" help:"typed, search or auto (default: auto, deciding by its own list against --tool-budget)"`
	RequiredScope []string   `yaml:"required_scope" help:"OAuth scopes a token must hold to use its endpoints at all, on top of --oauth-required-scope; needs --oauth-jwks-url"`
	Tools         []fileTool `yaml:"tools" help:"corrections of its own copies of its tools, after the top-level tools:, with the same keys (below)"`
}

// fileBackend is one entry of backends:. TLS keys left out inherit the
// gateway-wide ones (plaintext, backend_ca...) only when the entry sets
// none of its own, so a backend's TLS is always read from one place.
// Each field's help tag is its line in docs/configuration.md (keyHelp).
// A key that is a gateway-wide setting given for this backend alone
// names that setting's declaration in its setting tag: its default is
// that setting (keyHelp says so), and whether it may be off is that
// declaration's offOK (checkOverrides).
type fileBackend struct {
	Name          string            `yaml:"name" help:"the backend's name, 1-32 of a-z 0-9 _ -; required with several backends"`
	Address       string            `yaml:"address" help:"required: a gRPC target, as --backend takes it (HOST:PORT, dns:///HOST:PORT, unix:///PATH, unix-abstract:NAME, passthrough:///ADDR, or replicas HOST:PORT,HOST:PORT)"`
	Plaintext     *bool             `yaml:"plaintext" help:"true: no TLS to this backend (not with ca, cert, key or server_name); any of these five TLS keys replaces the gateway-wide plaintext and backend_* settings for this backend"`
	CA            string            `yaml:"ca" help:"PEM roots replacing the system roots"`
	Cert          string            `yaml:"cert" help:"PEM client certificate for mutual TLS (with key)"`
	Key           string            `yaml:"key" help:"PEM private key for cert"`
	ServerName    string            `yaml:"server_name" help:"name verified in the backend's certificate, and sent as SNI"`
	Metadata      map[string]string `yaml:"metadata" help:"KEY: VALUE gRPC metadata on every call to this backend, after the global metadata; -bin keys take base64"`
	Include       []string          `yaml:"include" help:"globs on package.Service/Method narrowing this backend's methods; a method must pass these and the global include/exclude"`
	Exclude       []string          `yaml:"exclude" help:"globs on package.Service/Method hiding this backend's methods"`
	CallTimeout   duration          `yaml:"call_timeout" setting:"call-timeout" help:"deadline of this backend's unary calls"`
	StreamTimeout duration          `yaml:"stream_timeout" setting:"stream-timeout" help:"deadline of this backend's streaming calls"`
	DescriptorSet []string          `yaml:"descriptor_set" help:"this backend's own descriptor set files, as --descriptor-set"`
	ProtoPath     []string          `yaml:"proto_path" help:"import paths for proto (default .)"`
	Proto         []string          `yaml:"proto" help:"this backend's own .proto files, as --proto"`
	NoReflection  bool              `yaml:"no_reflection" help:"never ask this backend for reflection: its descriptor_set or proto alone"`
	Methods       []fileMethod      `yaml:"methods" help:"per-method settings (below); for each method the first matching entry applies"`
	TokenExchange *exchangeSettings `yaml:"token_exchange" help:"call this backend as the end user: each caller's OAuth token is exchanged for one meant for the backend (RFC 8693; keys below); with token_url it replaces the --backend-token-exchange flags for this backend, without it it takes their endpoint and client and names this backend's audience or resource, as each backend must when there are several"`

	// Connection settings; each left out is the gateway-wide one
	// (backend_lb, backend_keepalive, ...).
	LB           *string   `yaml:"lb" setting:"backend-lb" help:"round_robin or pick_first"`
	Keepalive    *duration `yaml:"keepalive" setting:"backend-keepalive" help:"ping after this silence with calls in flight; off: no pings"`
	MaxRecvBytes *count    `yaml:"max_recv_bytes" setting:"backend-max-recv-bytes" help:"largest response message; unlimited: no limit"`
	MaxSendBytes *count    `yaml:"max_send_bytes" setting:"backend-max-send-bytes" help:"largest request message; unlimited: no limit"`
	Retry        *string   `yaml:"retry" setting:"retry" help:"\"on\" or \"off\", quoted"`
}

// fileMethod is one entry of a backend's methods:, overriding its
// settings for the methods Match selects (the first match wins).
type fileMethod struct {
	Match         string   `yaml:"match" help:"required: a glob on package.Service/Method"`
	CallTimeout   duration `yaml:"call_timeout" help:"deadline of the matching unary methods' calls, over the backend's and method_timeout"`
	StreamTimeout duration `yaml:"stream_timeout" help:"deadline of the matching streaming methods' calls"`
	Hidden        bool     `yaml:"hidden" help:"true: never offered as a tool"`
	// OperationWait overrides operation_wait for a long-running method.
	OperationWait duration `yaml:"operation_wait" help:"operation_wait for the matching long-running methods (off or negative: do not wait)"`
	TokenScope    []string `yaml:"token_scope" help:"scopes asked, on top of token_exchange's (or --backend-token-exchange-scope), for the backend's token when the matching methods are called as the end user; unused otherwise"`
}

// keyHelp is the help of a config file key, its line in
// docs/configuration.md: the field's help tag, and for a key that
// overrides a gateway-wide setting (its setting tag), that its default is
// that setting's key.
func keyHelp(f reflect.StructField) string {
	help := f.Tag.Get("help")
	if name := f.Tag.Get("setting"); name != "" {
		help += " (default: " + flagKey(declared(name).name) + ")"
	}
	return help
}
