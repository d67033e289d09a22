package schema

import "google.golang.org/protobuf/reflect/protoreflect"

// Injector completes a converted request before it is checked: the
// arguments an operator fixed or gave a default (gateway/overrides.go)
// are set in the message, and those a caller may not send are refused.
// It runs after protojson and before the checks, so a required field the
// injector supplies is not missing, and the backend's rules see the
// request it will receive.
type Injector interface {
	// Inject refuses what the caller set that it may not (hidden and
	// fixed arguments), as violations at their paths, and otherwise sets
	// the fixed and default values in msg.
	Inject(msg protoreflect.Message) []Violation
	// Supplies reports whether the injector sets the argument at path
	// (in the schema's names), whose absence is then no violation.
	Supplies(path string) bool
}

// WithInjector is v with in completing every request it decodes; v
// itself is unchanged, so one validator of a message type can serve
// tools with different injectors.
func (v *Validator) WithInjector(in Injector) *Validator {
	c := *v
	c.inject = in
	return &c
}

// injected runs v's injector, if any, on msg.
func (v *Validator) injected(msg protoreflect.Message) []Violation {
	if v.inject == nil {
		return nil
	}
	return v.inject.Inject(msg)
}
