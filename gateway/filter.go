package gateway

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// Method filters (Options.Catalog.Include and Options.Catalog.Exclude, --include and
// --exclude).
//
// A pattern is matched against "package.Service/Method", for example
// "zoo.v1.ZooService/GetAnimal", with path.Match: '*' matches any run of
// characters except '/', '?' one such character, '[...]' a class, and '\'
// escapes. So '*' stays within the service part or the method part:
//
//	zoo.v1.ZooService/*      every method of one service
//	zoo.v1.*/*               every method of every service in zoo.v1
//	*/Get*                   every method whose name starts with Get
//	zoo.v1.ZooService        a pattern without '/' names services: it is
//	                         read as zoo.v1.ZooService/*
//
// A method is exposed when it matches at least one include pattern (or no
// include pattern is given) and no exclude pattern. Filters apply to every
// backend alike and after the fixed rules: grpc.reflection.* is never
// exposed, grpc.health.v1.Health only with ExposeHealth, the internal
// services (InternalServices) only with Catalog.ExposeInternal, and methods or
// services hidden by their proto options never. So an include pattern
// alone does not expose a service a fixed rule hides: the operator says
// so with its option.

// InternalServices are the full names of the services hidden unless
// Options.Catalog.ExposeInternal, sorted: for help texts and docs, which list
// them from here.
func InternalServices() []string { return compiled.InternalServices() }

// methodFilter is the compiled Include and Exclude lists. A nil filter
// matches everything.
type methodFilter struct {
	include, exclude []string
}

// newMethodFilter checks every pattern's syntax, so that a typo fails at
// start: the error is an *OptionError on owner's Include or Exclude
// ("Options.Catalog.Include"), naming the pattern.
func newMethodFilter(owner string, include, exclude []string) (*methodFilter, error) {
	if len(include) == 0 && len(exclude) == 0 {
		return nil, nil
	}
	f := &methodFilter{}
	var err error
	if f.include, err = methodglob.CompileOption(owner+".Include", include); err != nil {
		return nil, err
	}
	if f.exclude, err = methodglob.CompileOption(owner+".Exclude", exclude); err != nil {
		return nil, err
	}
	return f, nil
}

// match reports whether m is exposed by the filter.
func (f *methodFilter) match(m protoreflect.MethodDescriptor) bool {
	if f == nil {
		return true
	}
	return f.matchPath(methodPath(m))
}

// matchPath is match for a method named "package.Service/Method".
func (f *methodFilter) matchPath(name string) bool {
	if f == nil {
		return true
	}
	if len(f.include) > 0 && !methodglob.MatchAny(f.include, name) {
		return false
	}
	return !methodglob.MatchAny(f.exclude, name)
}

// methodPath is m as the patterns name it: "package.Service/Method".
func methodPath(m protoreflect.MethodDescriptor) string {
	return string(m.Parent().FullName()) + "/" + string(m.Name())
}
