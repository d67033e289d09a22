package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/reflection"
)

// The config file (--config FILE, YAML) can say everything the flags say,
// plus what only makes sense per backend. examples/config/gateway.yaml
// documents every key.
//
// Precedence, for each setting: the file, then the command line, then
// GATEWAY_* environment variables (scalar settings only: the flag name
// upper-cased with '-' as '_', e.g. GATEWAY_CALL_TIMEOUT). A list given on
// the command line (--include, --backend...) replaces the file's list
// rather than adding to it; --backend replaces the file's backends.
//
// Every scalar and list key is a flag's name in snake_case, and the file
// is applied by setting those flags, so one parser and one validation
// serve both; TestConfigCoversEveryFlag keeps the two in step. Errors name
// the file, the line and the key: "gateway.yaml:7: unknown key "plaintxt"
// in backends[0]".

// fileConfig is the schema of the config file. A nil pointer or an empty
// list means "not set", so the flag's default (or command line) stands.
type fileConfig struct {
	// Backends replaces --backend, with per-backend settings.
	Backends []fileBackend `yaml:"backends"`

	Listen            *string   `yaml:"listen"`
	Stdio             *bool     `yaml:"stdio"`
	Plaintext         *bool     `yaml:"plaintext"`
	BackendCA         *string   `yaml:"backend_ca"`
	BackendCert       *string   `yaml:"backend_cert"`
	BackendKey        *string   `yaml:"backend_key"`
	BackendServerName *string   `yaml:"backend_server_name"`
	CallTimeout       *duration `yaml:"call_timeout"`
	StreamTimeout     *duration `yaml:"stream_timeout"`
	StreamMaxMessages *int      `yaml:"stream_max_messages"`
	StreamMaxBytes    *int64    `yaml:"stream_max_bytes"`
	DiscoveryTimeout  *duration `yaml:"discovery_timeout"`
	ShutdownGrace     *duration `yaml:"shutdown_grace"`
	InputErrors       *string   `yaml:"input_errors"`
	ExposeHealth      *bool     `yaml:"expose_health"`
	JSONNames         *string   `yaml:"json_names"`
	AllowOrigin       []string  `yaml:"allow_origin"`

	MaxRequestBytes    *int64    `yaml:"max_request_bytes"`
	WSMaxMessageBytes  *int64    `yaml:"ws_max_message_bytes"`
	MaxConcurrentCalls *int      `yaml:"max_concurrent_calls"`
	SessionSecretFile  *string   `yaml:"session_secret_file"`
	SessionTTL         *duration `yaml:"session_ttl"`

	Include         []string  `yaml:"include"`
	Exclude         []string  `yaml:"exclude"`
	DescriptorSet   []string  `yaml:"descriptor_set"`
	ProtoPath       []string  `yaml:"proto_path"`
	Proto           []string  `yaml:"proto"`
	NoReflection    *bool     `yaml:"no_reflection"`
	Refresh         *duration `yaml:"refresh"`
	RequireBackends *bool     `yaml:"require_backends"`

	TLSCert            *string           `yaml:"tls_cert"`
	TLSKey             *string           `yaml:"tls_key"`
	BearerTokensFile   *string           `yaml:"bearer_tokens_file"`
	OAuthJWKSURL       *string           `yaml:"oauth_jwks_url"`
	OAuthIssuer        *string           `yaml:"oauth_issuer"`
	OAuthAudience      *string           `yaml:"oauth_audience"`
	OAuthResource      *string           `yaml:"oauth_resource"`
	OAuthRequiredScope []string          `yaml:"oauth_required_scope"`
	OAuthToolScope     []string          `yaml:"oauth_tool_scope"`
	ForwardClaim       []string          `yaml:"forward_claim"`
	ForwardHeader      []string          `yaml:"forward_header"`
	Metadata           map[string]string `yaml:"metadata"`

	Metrics      *bool   `yaml:"metrics"`
	LogArguments *bool   `yaml:"log_arguments"`
	LogLevel     *string `yaml:"log_level"`
	LogFormat    *string `yaml:"log_format"`
}

// fileBackend is one entry of backends:. TLS keys left out inherit the
// gateway-wide ones (plaintext, backend_ca...) only when the entry sets
// none of its own, so a backend's TLS is always read from one place.
type fileBackend struct {
	Name          string            `yaml:"name"`
	Address       string            `yaml:"address"`
	Plaintext     *bool             `yaml:"plaintext"`
	CA            string            `yaml:"ca"`
	Cert          string            `yaml:"cert"`
	Key           string            `yaml:"key"`
	ServerName    string            `yaml:"server_name"`
	Metadata      map[string]string `yaml:"metadata"`
	Include       []string          `yaml:"include"`
	Exclude       []string          `yaml:"exclude"`
	CallTimeout   duration          `yaml:"call_timeout"`
	StreamTimeout duration          `yaml:"stream_timeout"`
	DescriptorSet []string          `yaml:"descriptor_set"`
	ProtoPath     []string          `yaml:"proto_path"`
	Proto         []string          `yaml:"proto"`
	NoReflection  bool              `yaml:"no_reflection"`
	Methods       []fileMethod      `yaml:"methods"`
}

// fileMethod is one entry of a backend's methods:, overriding its
// settings for the methods Match selects (the first match wins).
type fileMethod struct {
	Match         string   `yaml:"match"`
	CallTimeout   duration `yaml:"call_timeout"`
	StreamTimeout duration `yaml:"stream_timeout"`
	Hidden        bool     `yaml:"hidden"`
}

// duration is a time.Duration written as Go spells it ("30s", "1m30s").
// Its own decoder keeps the position of a bad value, which the YAML
// library drops for time.ParseDuration's errors.
type duration time.Duration

func (d *duration) UnmarshalYAML(n ast.Node) error {
	s, ok := n.(*ast.StringNode)
	if !ok {
		if i, isInt := n.(*ast.IntegerNode); isInt && fmt.Sprint(i.Value) == "0" {
			*d = 0
			return nil
		}
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want a duration such as 30s or 1m30s, got %s", n)}
	}
	v, err := time.ParseDuration(s.Value)
	if err != nil {
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want a duration such as 30s or 1m30s, got %q", s.Value)}
	}
	*d = duration(v)
	return nil
}

// valueError is a bad value found while decoding, with its position.
type valueError struct {
	tok *token.Token
	msg string
}

func (e *valueError) Error() string { return e.msg }

// configDoc is a parsed config file: its name for messages and where each
// key is, for errors found after decoding.
type configDoc struct {
	name  string
	lines map[string]int          // "backends[0].address" -> line
	paths map[*token.Token]string // a node's token -> its path
}

// at prefixes a message with the file and the line of key (a path such as
// "backends[1].name"); a key not in the file gets the file alone.
func (d *configDoc) at(key string) string {
	if l, ok := d.lines[key]; ok {
		return fmt.Sprintf("%s:%d", d.name, l)
	}
	return d.name
}

func (d *configDoc) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", d.at(key), key, fmt.Errorf(format, args...))
}

// loadConfig reads and decodes path strictly: unknown keys, duplicate keys
// and values of the wrong type are errors naming the line and the key.
func loadConfig(path string) (*fileConfig, *configDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--config: %w", err)
	}
	doc := &configDoc{name: path, lines: map[string]int{}, paths: map[*token.Token]string{}}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, doc.yamlError(err)
	}
	var cfg fileConfig
	if len(f.Docs) > 1 {
		return nil, nil, fmt.Errorf("%s: want one YAML document, got %d", path, len(f.Docs))
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return &cfg, doc, nil
	}
	ast.Walk(doc, f.Docs[0].Body)
	if _, ok := f.Docs[0].Body.(*ast.MappingNode); !ok {
		if _, ok := f.Docs[0].Body.(*ast.MappingValueNode); !ok {
			return nil, nil, fmt.Errorf("%s: want a mapping of settings (key: value) at the top level", path)
		}
	}
	if err := yaml.NodeToValue(f.Docs[0].Body, &cfg, yaml.DisallowUnknownField()); err != nil {
		return nil, nil, doc.yamlError(err)
	}
	return &cfg, doc, nil
}

// Visit indexes every node's path and line.
func (d *configDoc) Visit(n ast.Node) ast.Visitor {
	tk := n.GetToken()
	if tk == nil {
		return d
	}
	p := strings.TrimPrefix(strings.TrimPrefix(n.GetPath(), "$"), ".")
	if _, seen := d.lines[p]; !seen && p != "" {
		d.lines[p] = tk.Position.Line
	}
	d.paths[tk] = p
	return d
}

// yamlError rephrases the YAML library's errors (which speak of Go types
// and struct fields) in the file's terms.
func (d *configDoc) yamlError(err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		key := d.paths[ve.tok]
		return fmt.Errorf("%s:%d: %s: %s", d.name, ve.tok.Position.Line, key, ve.msg)
	}
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	line := ye.GetToken().Position.Line
	key := d.paths[ye.GetToken()]
	var unknown *yaml.UnknownFieldError
	var typ *yaml.TypeError
	switch {
	case errors.As(err, &unknown):
		parent, name := "", key
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			parent, name = key[:i], key[i+1:]
		}
		if parent == "" {
			return fmt.Errorf("%s:%d: unknown key %q", d.name, line, name)
		}
		return fmt.Errorf("%s:%d: unknown key %q in %s", d.name, line, name, parent)
	case errors.As(err, &typ):
		return fmt.Errorf("%s:%d: %s: want %s, got %s", d.name, line, key, yamlTypeName(typ.DstType), yamlTypeName(typ.SrcType))
	}
	return fmt.Errorf("%s:%d: %s", d.name, line, ye.GetMessage())
}

func yamlTypeName(t reflect.Type) string {
	if t == nil {
		return "nothing"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Int32, reflect.Uint32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

// metaFlags are flags that say what the program does rather than how the
// gateway runs, so no config key or environment variable sets them.
var metaFlags = map[string]bool{"config": true, "check-config": true, "version": true, "probe": true}

// flagKey is the config key of a flag: --call-timeout is call_timeout.
func flagKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// envName is the environment variable of a flag: --call-timeout is
// GATEWAY_CALL_TIMEOUT.
func envName(name string) string { return "GATEWAY_" + strings.ToUpper(flagKey(name)) }

// origins records where a flag's value came from when it was not the
// command line, so a validation error names the file line or variable.
type origins map[string]string

// applyFile sets, from cfg, every flag the command line did not set.
func applyFile(fs *flag.FlagSet, cfg *fileConfig, doc *configDoc, explicit map[string]bool, from origins) error {
	v := reflect.ValueOf(cfg).Elem()
	for i := range v.NumField() {
		key := v.Type().Field(i).Tag.Get("yaml")
		if key == "backends" {
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		if explicit[name] {
			continue
		}
		vals := fieldStrings(v.Field(i))
		for _, s := range vals {
			if err := fs.Set(name, s); err != nil {
				return doc.errorf(key, "%w", err)
			}
		}
		if len(vals) > 0 {
			from[name] = doc.at(key) + ": " + key
		}
	}
	return nil
}

// fieldStrings renders a config field as the flag values that set it; nil
// when the field is unset.
func fieldStrings(f reflect.Value) []string {
	switch f.Kind() {
	case reflect.Pointer:
		if f.IsNil() {
			return nil
		}
		e := f.Elem()
		if d, ok := e.Interface().(duration); ok {
			return []string{time.Duration(d).String()}
		}
		return []string{fmt.Sprint(e.Interface())}
	case reflect.Slice:
		return f.Interface().([]string)
	case reflect.Map:
		m := f.Interface().(map[string]string)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = k + "=" + m[k]
		}
		return out
	}
	panic("config: unsupported field kind " + f.Kind().String())
}

// applyEnv sets every scalar flag that has a GATEWAY_* variable; lists
// are left alone, since one variable cannot say whether it adds to or
// replaces a list.
func applyEnv(fs *flag.FlagSet, getenv func(string) (string, bool), from origins) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || metaFlags[f.Name] {
			return
		}
		if _, list := f.Value.(*stringList); list {
			return
		}
		env := envName(f.Name)
		v, ok := getenv(env)
		if !ok {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = fmt.Errorf("%s: invalid value %q: %w", env, v, serr)
			return
		}
		from[f.Name] = env
	})
	return err
}

var flagRE = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)

// attribute rewrites a validation error that names flags ("--call-timeout:
// want ...") to name where their values came from, when that was the file
// or the environment: "gateway.yaml:3: call_timeout: want ...".
func (from origins) attribute(err error) error {
	if err == nil || len(from) == 0 {
		return err
	}
	msg := err.Error()
	first := flagRE.FindString(msg)
	where, ok := from[strings.TrimPrefix(first, "--")]
	if !ok || !strings.HasPrefix(msg, first) {
		return err
	}
	rest := flagRE.ReplaceAllStringFunc(msg[len(first):], func(f string) string {
		name := strings.TrimPrefix(f, "--")
		if o, ok := from[name]; ok {
			if strings.HasPrefix(o, "GATEWAY_") {
				return o
			}
			return flagKey(name)
		}
		return f
	})
	return &sourcedError{msg: where + rest, err: err}
}

// sourcedError is a validation error restated with its value's origin.
type sourcedError struct {
	msg string
	err error
}

func (e *sourcedError) Error() string { return e.msg }
func (e *sourcedError) Unwrap() error { return e.err }

// fileBackends checks the file's backends and compiles each into what dial
// needs. Every error names the line and the key.
func fileBackends(ctx context.Context, cfg *fileConfig, doc *configDoc) ([]backendAddr, error) {
	var out []backendAddr
	names := map[string]string{}
	for i, fb := range cfg.Backends {
		key := fmt.Sprintf("backends[%d]", i)
		if fb.Address == "" {
			return nil, fmt.Errorf("%s: %s: address is required (HOST:PORT)", doc.at(key), key)
		}
		if _, _, err := net.SplitHostPort(fb.Address); err != nil {
			return nil, doc.errorf(key+".address", "want HOST:PORT, got %q", fb.Address)
		}
		switch {
		case fb.Name == "" && len(cfg.Backends) > 1:
			return nil, fmt.Errorf("%s: %s: name is required when there are several backends", doc.at(key), key)
		case fb.Name != "":
			if err := gateway.ValidBackendName(fb.Name); err != nil {
				return nil, doc.errorf(key+".name", "%w", err)
			}
			if first, dup := names[fb.Name]; dup {
				return nil, doc.errorf(key+".name", "the name %q is used twice (first at %s)", fb.Name, first)
			}
			names[fb.Name] = doc.at(key + ".name")
		}
		b := &fileBackendSettings{}
		var err error
		if b.tls, err = fb.checkTLS(doc, key); err != nil {
			return nil, err
		}
		if len(fb.Metadata) > 0 {
			if b.backend.Metadata, err = gateway.ParseMetadata(fieldStrings(reflect.ValueOf(fb.Metadata))); err != nil {
				return nil, doc.errorf(key+".metadata", "%w", err)
			}
		}
		for _, l := range []struct {
			field    string
			patterns []string
		}{{"include", fb.Include}, {"exclude", fb.Exclude}} {
			for j, p := range l.patterns {
				k := fmt.Sprintf("%s.%s[%d]", key, l.field, j)
				if err := gateway.CheckMethodPattern(k, p); err != nil {
					return nil, fmt.Errorf("%s: %w", doc.at(k), err)
				}
			}
		}
		b.backend.Include, b.backend.Exclude = fb.Include, fb.Exclude
		if fb.CallTimeout < 0 {
			return nil, doc.errorf(key+".call_timeout", "want a positive duration, got %s", time.Duration(fb.CallTimeout))
		}
		if fb.StreamTimeout < 0 {
			return nil, doc.errorf(key+".stream_timeout", "want a positive duration, got %s", time.Duration(fb.StreamTimeout))
		}
		b.backend.CallTimeout, b.backend.StreamTimeout = time.Duration(fb.CallTimeout), time.Duration(fb.StreamTimeout)
		for j, m := range fb.Methods {
			mk := fmt.Sprintf("%s.methods[%d]", key, j)
			if m.Match == "" {
				return nil, fmt.Errorf("%s: %s: match is required (a glob on package.Service/Method)", doc.at(mk), mk)
			}
			if err := gateway.CheckMethodPattern(mk+".match", m.Match); err != nil {
				return nil, fmt.Errorf("%s: %w", doc.at(mk+".match"), err)
			}
			if m.CallTimeout < 0 || m.StreamTimeout < 0 {
				return nil, fmt.Errorf("%s: %s: timeouts must be positive durations", doc.at(mk), mk)
			}
			b.backend.Methods = append(b.backend.Methods, gateway.MethodSettings{
				Match: m.Match, CallTimeout: time.Duration(m.CallTimeout), StreamTimeout: time.Duration(m.StreamTimeout), Hidden: m.Hidden,
			})
		}
		if b.backend.Files, err = fb.descriptorFiles(ctx, doc, key); err != nil {
			return nil, err
		}
		if fb.NoReflection && b.backend.Files == nil {
			return nil, doc.errorf(key+".no_reflection", "needs descriptor_set or proto on the same backend")
		}
		b.backend.NoReflection = fb.NoReflection
		out = append(out, backendAddr{name: fb.Name, addr: fb.Address, file: b})
	}
	return out, nil
}

// fileBackendSettings is what a config file backend adds to a --backend:
// its own TLS (nil: the gateway-wide flags) and the gateway.Backend
// fields dial copies.
type fileBackendSettings struct {
	tls     *gateway.BackendTLS
	backend gateway.Backend
}

// applyTo copies the per-backend settings into b, which dial has filled
// with the name, address and connection.
func (s *fileBackendSettings) applyTo(b *gateway.Backend) {
	b.Metadata = s.backend.Metadata
	b.CallTimeout, b.StreamTimeout = s.backend.CallTimeout, s.backend.StreamTimeout
	b.Include, b.Exclude = s.backend.Include, s.backend.Exclude
	b.Methods = s.backend.Methods
	if s.backend.Files != nil {
		b.Files, b.NoReflection = s.backend.Files, s.backend.NoReflection
	}
}

// checkTLS validates a backend's TLS keys and loads the files they name,
// so a missing or malformed certificate is reported at its line before
// anything starts. It returns nil when the backend sets no TLS key.
func (fb *fileBackend) checkTLS(doc *configDoc, key string) (*gateway.BackendTLS, error) {
	if fb.Plaintext == nil && fb.CA == "" && fb.Cert == "" && fb.Key == "" && fb.ServerName == "" {
		return nil, nil
	}
	t := &gateway.BackendTLS{CAFile: fb.CA, CertFile: fb.Cert, KeyFile: fb.Key, ServerName: fb.ServerName}
	if fb.Plaintext != nil {
		t.Plaintext = *fb.Plaintext
	}
	if t.Plaintext && (fb.CA != "" || fb.Cert != "" || fb.Key != "" || fb.ServerName != "") {
		return nil, doc.errorf(key+".plaintext", "plaintext cannot be combined with ca, cert, key or server_name")
	}
	if fb.CA != "" {
		pem, err := os.ReadFile(fb.CA)
		if err != nil {
			return nil, doc.errorf(key+".ca", "%w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, doc.errorf(key+".ca", "%s: no PEM certificates found", fb.CA)
		}
	}
	if (fb.Cert == "") != (fb.Key == "") {
		k := key + ".cert"
		if fb.Cert == "" {
			k = key + ".key"
		}
		return nil, doc.errorf(k, "cert and key must be given together")
	}
	if fb.Cert != "" {
		if _, err := tls.LoadX509KeyPair(fb.Cert, fb.Key); err != nil {
			return nil, doc.errorf(key+".cert", "%w", err)
		}
	}
	return t, nil
}

// descriptorFiles reads or compiles a backend's own descriptor files.
func (fb *fileBackend) descriptorFiles(ctx context.Context, doc *configDoc, key string) (reflection.Source, error) {
	if len(fb.ProtoPath) > 0 && len(fb.Proto) == 0 {
		return nil, doc.errorf(key+".proto_path", "needs proto")
	}
	if len(fb.DescriptorSet) > 0 && len(fb.Proto) > 0 {
		return nil, doc.errorf(key+".proto", "descriptor_set and proto: choose one way to give descriptor files")
	}
	src, fromProto, err := descriptorSource(ctx, fb.DescriptorSet, fb.ProtoPath, fb.Proto)
	switch {
	case err != nil && fromProto:
		return nil, doc.errorf(key+".proto", "%w", err)
	case err != nil:
		return nil, doc.errorf(key+".descriptor_set", "%w", err)
	}
	return src, nil
}

// explicitFlags are the flags the command line set.
func explicitFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// configure applies the config file (when --config or --check-config
// names one) under the command line, then the environment over both. It
// returns where each value that did not come from the command line came
// from, for error messages.
func (c *config) configure(ctx context.Context, fs *flag.FlagSet, getenv func(string) (string, bool)) (origins, error) {
	from := origins{}
	explicit := explicitFlags(fs)
	path := c.configFile
	if c.checkConfig != "" {
		if path != "" && path != c.checkConfig {
			return nil, errors.New("--config and --check-config name different files: give one")
		}
		path = c.checkConfig
	}
	if path != "" {
		cfg, doc, err := loadConfig(path)
		if err != nil {
			return nil, err
		}
		if err := applyFile(fs, cfg, doc, explicit, from); err != nil {
			return nil, err
		}
		if !explicit["backend"] && len(cfg.Backends) > 0 {
			if c.backends.parsed, err = fileBackends(ctx, cfg, doc); err != nil {
				return nil, err
			}
		}
	}
	if err := applyEnv(fs, getenv, from); err != nil {
		return nil, err
	}
	return from, nil
}
