package gateway

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/forward"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// Per-backend settings (Backend.Include, Exclude, Methods, timeouts and
// Metadata) are compiled once, when the gateway starts, and applied to each
// of the backend's tools at discovery: the per-call path reads the result
// from the tool (tool.timeout, tool.md) and does no matching.

// MethodTimeout is the deadline of the calls of the methods Match
// selects, on every backend (Options.Calls.MethodTimeouts): for a long poll
// (Temporal's PollWorkflowTaskQueue holds a call until a task comes or
// its deadline nears) or a slow report, without a config file entry per
// backend.
type MethodTimeout struct {
	// Match is a glob on "package.Service/Method", with the syntax of
	// Options.Catalog.Include (a pattern without '/' means every method of a
	// service).
	Match string
	// Timeout is the deadline of each call of a matching method, unary or
	// streaming; it must be positive.
	Timeout time.Duration
}

// methodTimeouts are Options.Calls.MethodTimeouts compiled; the first entry
// that matches a method applies.
type methodTimeouts []compiledTimeout

type compiledTimeout struct {
	pattern string
	timeout time.Duration
}

// newMethodTimeouts checks every entry, so that a typo or a deadline that
// is not one fails at start, naming the entry.
func newMethodTimeouts(mts []MethodTimeout) (methodTimeouts, error) {
	var out methodTimeouts
	for i, mt := range mts {
		option := fmt.Sprintf("Options.Calls.MethodTimeouts[%d]", i)
		ps, err := methodglob.CompileOption(option+".Match", []string{mt.Match})
		if err != nil {
			return nil, err
		}
		if mt.Timeout <= 0 {
			return nil, &OptionError{Option: option + ".Timeout", Err: fmt.Errorf("want a positive duration (a call always has a deadline), got %s", mt.Timeout)}
		}
		out = append(out, compiledTimeout{pattern: ps[0], timeout: mt.Timeout})
	}
	return out, nil
}

// match is the deadline of the first entry matching m, 0 when none does.
func (mts methodTimeouts) match(m protoreflect.MethodDescriptor) time.Duration {
	if len(mts) == 0 {
		return 0
	}
	name := methodPath(m)
	for _, mt := range mts {
		if methodglob.Match(mt.pattern, name) {
			return mt.timeout
		}
	}
	return 0
}

// MethodSettings override the backend's settings for the methods matching
// Match. They come from the config file's `methods:` entries.
type MethodSettings struct {
	// Match is a glob on "package.Service/Method", with the syntax of
	// Options.Catalog.Include (a pattern without '/' means every method of a
	// service).
	Match string
	// CallTimeout, when positive, is the deadline of the method's calls if
	// it is unary; StreamTimeout if it streams. Each wins over the
	// backend's and the gateway's.
	CallTimeout, StreamTimeout time.Duration
	// Hidden keeps the method out of the tool list, as the
	// (mcpgateway.v1.tool) hidden option would.
	Hidden bool
	// OperationWait, when nonzero, replaces Options.Calls.OperationWait for the
	// method if it is long-running (negative: do not wait).
	OperationWait time.Duration
	// TokenScopes are asked, on top of the exchanger's own, for the
	// backend's token when the method is called as the end user
	// (Backend.TokenExchange); a token is kept per set of scopes.
	TokenScopes []string
}

// backendSettings is one backend's compiled settings. A nil
// *backendSettings means none, and costs a nil check.
type backendSettings struct {
	filter                     *methodFilter
	methods                    []compiledMethod
	callTimeout, streamTimeout time.Duration
	md                         metadata.MD
	// exchanger is Backend.TokenExchange, nil for none.
	exchanger *exchange.Exchanger
}

type compiledMethod struct {
	pattern string
	MethodSettings
}

// newBackendSettings checks and compiles b's settings; it returns nil when
// b has none.
func newBackendSettings(b Backend) (*backendSettings, error) {
	if len(b.Include) == 0 && len(b.Exclude) == 0 && len(b.Methods) == 0 &&
		b.CallTimeout <= 0 && b.StreamTimeout <= 0 && len(b.Metadata) == 0 && b.TokenExchange == nil {
		return nil, nil
	}
	s := &backendSettings{callTimeout: b.CallTimeout, streamTimeout: b.StreamTimeout, exchanger: b.TokenExchange}
	var err error
	if s.filter, err = newMethodFilter("Backend", b.Include, b.Exclude); err != nil {
		return nil, err
	}
	for i, m := range b.Methods {
		ps, err := methodglob.Compile(fmt.Sprintf("methods[%d].match", i), []string{m.Match})
		if err != nil {
			return nil, err
		}
		for _, sc := range m.TokenScopes {
			if !auth.ValidScope(sc) {
				return nil, fmt.Errorf("methods[%d].TokenScopes: %q is not an OAuth scope token", i, sc)
			}
		}
		m.TokenScopes = slices.Compact(slices.Sorted(slices.Values(m.TokenScopes)))
		s.methods = append(s.methods, compiledMethod{pattern: ps[0], MethodSettings: m})
	}
	if len(b.Metadata) > 0 {
		// Validated like Options.Calls.Metadata, so a bad key fails at start.
		md, err := forward.New(nil, b.Metadata)
		if err != nil {
			return nil, err
		}
		s.md = md.Static()
	}
	return s, nil
}

// method is the first per-method entry matching m, or nil.
func (s *backendSettings) method(m protoreflect.MethodDescriptor) *compiledMethod {
	if s == nil || len(s.methods) == 0 {
		return nil
	}
	name := methodPath(m)
	for i := range s.methods {
		if methodglob.Match(s.methods[i].pattern, name) {
			return &s.methods[i]
		}
	}
	return nil
}

// exposes reports whether the backend's own filter and per-method settings
// let m through.
func (s *backendSettings) exposes(m protoreflect.MethodDescriptor) bool {
	if s == nil {
		return true
	}
	if mc := s.method(m); mc != nil && mc.Hidden {
		return false
	}
	return s.filter.match(m)
}

// deadlines are the gateway-wide ones: Options.Calls.MethodTimeouts, then
// Options.Calls.Timeout and StreamTimeout (resolved).
type deadlines struct {
	methods      methodTimeouts
	call, stream time.Duration
}

// apply sets t's deadline, metadata and operation wait. For the deadline
// the most specific setting wins: the backend's entry for the method
// (Backend.Methods), the gateway's entry for it (Options.Calls.MethodTimeouts),
// the backend's deadline for its kind of call, then the gateway's. A
// setting that names the method beats one that covers a whole backend:
// an operator who gave Temporal's polls 70s meant it for every backend
// that serves them.
func (s *backendSettings) apply(t *compiled.Tool, m protoreflect.MethodDescriptor, d deadlines) {
	unary := t.Call.Kind == compiled.KindUnary
	t.Call.Timeout = d.stream
	if unary {
		t.Call.Timeout = d.call
	}
	if s != nil {
		t.Call.MD, t.Access.Exchanger = s.md, s.exchanger
		if unary && s.callTimeout > 0 {
			t.Call.Timeout = s.callTimeout
		}
		if !unary && s.streamTimeout > 0 {
			t.Call.Timeout = s.streamTimeout
		}
	}
	if mt := d.methods.match(m); mt > 0 {
		t.Call.Timeout = mt
	}
	if s == nil {
		return
	}
	if mc := s.method(m); mc != nil {
		if unary && mc.CallTimeout > 0 {
			t.Call.Timeout = mc.CallTimeout
		}
		if !unary && mc.StreamTimeout > 0 {
			t.Call.Timeout = mc.StreamTimeout
		}
		if t.LRO != nil && mc.OperationWait != 0 {
			t.LRO.Wait = mc.OperationWait
		}
		t.Access.TokenScopes = mc.TokenScopes
	}
}

// exposer is compiled.Options.Exposes: the gateway's filter, then the
// backend's own settings (s, nil for none).
func exposer(filter *methodFilter, s *backendSettings) func(protoreflect.MethodDescriptor) bool {
	return func(m protoreflect.MethodDescriptor) bool { return filter.match(m) && s.exposes(m) }
}

// settler is compiled.Options.Settle: apply, with the gateway-wide
// deadlines d.
func (s *backendSettings) settler(d deadlines) func(*compiled.Tool, protoreflect.MethodDescriptor) {
	return func(t *compiled.Tool, m protoreflect.MethodDescriptor) { s.apply(t, m, d) }
}

// metadata is the backend's own metadata, nil for none.
func (s *backendSettings) metadata() metadata.MD {
	if s == nil {
		return nil
	}
	return s.md
}
