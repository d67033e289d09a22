package descriptors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Defaults of ServerReflectionOptions.LookupTimeout and MaxLookups.
const (
	DefaultLookupTimeout = 5 * time.Second
	DefaultMaxLookups    = 256
)

// lookupRetry is how long a lookup that failed without an answer about the
// type (the backend unreachable, the time up) is remembered: calls in that
// window get the same failure instead of asking again, so a backend that
// keeps failing is asked about a type at most once per window.
const lookupRetry = 10 * time.Second

// maxNameLen bounds the type names a TypeResolver sends: a full name longer
// than this is no real API's, and a backend's Any should not make the
// gateway send it arbitrary text.
const maxNameLen = 512

// ErrTypeNotDescribed is returned, wrapped, by TypeResolver.Resolve when
// the backend's answer says it cannot describe the type: its reflection
// does not know the name, the name is not a message's, or the files it
// sends for it cannot be built. Any other error is a lookup that got no
// such answer (the backend unreachable, the lookup's time up, the limit
// of lookups reached), which a later Resolve may retry.
var ErrTypeNotDescribed = errors.New("the backend does not describe the type")

// TypeResolver finds, through the backend's server reflection, the message
// types a discovery's Files do not declare: those of the google.protobuf.Any
// values a backend sends (error details, Any fields, operation metadata)
// whose files none of its services' files imports. Temporal's error details
// (temporal.api.errordetails.v1.NotFoundFailure...) are such types: its
// reflection describes them, but no service needs their file.
//
// Each type is asked for once (file_containing_symbol, then any import
// the answer lacks) and the answer kept for the resolver's life, which is
// its Result's: server reflection keeps one Result, and so one resolver,
// for as long as the backend's answers do not change. An answer that the
// backend cannot describe the type is kept too, and every name asked,
// described or not, counts toward MaxLookups; past it the resolver asks
// nothing more. Concurrent Resolves of one type share one lookup, and
// lookups go to the backend one at a time, each bounded, its wait for an
// earlier lookup included, by LookupTimeout and by its caller's ctx.
// Files fetched for one type are built against the discovery's files and
// those fetched before, so the descriptors a resolver returns refer to
// the ones its Result holds.
//
// A TypeResolver is safe for concurrent use.
type TypeResolver struct {
	conn    grpc.ClientConnInterface
	method  string
	base    *protoregistry.Files
	logger  *slog.Logger
	timeout time.Duration
	max     int
	now     func() time.Time

	// sem admits one lookup at a time to the backend, so that the
	// resolver holds one reflection stream at most and the files of one
	// lookup are built against every earlier one's.
	sem chan struct{}

	mu sync.Mutex
	// lookups holds every name asked: in flight, answered, or failed
	// until its retry time.
	lookups map[protoreflect.FullName]*typeLookup
	// extra holds the files built by earlier lookups. Written under both
	// sem and mu, read under either.
	extra *protoregistry.Files
	// warned: the limit of lookups has been logged.
	warned bool

	// onWait, when set (by tests), is called when a Resolve starts
	// waiting for another's lookup of the same type.
	onWait func()
}

// typeLookup is one name asked. done is closed when md and err are set.
type typeLookup struct {
	done chan struct{}
	md   protoreflect.MessageDescriptor
	err  error
	// until is when a failed lookup may be retried; zero for an answer,
	// which is kept.
	until time.Time
	// abandoned: the asking caller's ctx ended before the backend
	// answered, so the failure says nothing about the type; those who
	// waited for it ask again.
	abandoned bool
}

func newTypeResolver(conn grpc.ClientConnInterface, method string, base *protoregistry.Files, logger *slog.Logger, timeout time.Duration, limit int) *TypeResolver {
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	if limit <= 0 {
		limit = DefaultMaxLookups
	}
	return &TypeResolver{
		conn: conn, method: method, base: base, logger: logger, timeout: timeout, max: limit, now: time.Now,
		sem:     make(chan struct{}, 1),
		lookups: make(map[protoreflect.FullName]*typeLookup),
		extra:   new(protoregistry.Files),
	}
}

// Lookup returns the message type name when the discovery's files or an
// earlier Resolve described it, and nil otherwise. It never asks the
// backend, so it suits resolvers that cannot wait, such as protojson's.
func (r *TypeResolver) Lookup(name protoreflect.FullName) protoreflect.MessageDescriptor {
	if md, ok := findMessage(r.base, name); ok {
		return md
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.lookups[name]; l != nil && l.finished() {
		return l.md
	}
	if md, ok := findMessage(r.extra, name); ok {
		return md
	}
	return nil
}

// Resolve returns the message type name, asking the backend's reflection
// the first time a type the discovery's files do not declare is wanted.
// An error wraps ErrTypeNotDescribed when the backend's answer is that it
// cannot describe it; any other error is a lookup that failed, ctx's
// error among them (see TypeResolver).
func (r *TypeResolver) Resolve(ctx context.Context, name protoreflect.FullName) (protoreflect.MessageDescriptor, error) {
	if md := r.Lookup(name); md != nil {
		return md, nil
	}
	if len(name) > maxNameLen || !name.IsValid() {
		return nil, fmt.Errorf("reflection: look up %.64q: %w: not a type name", name, ErrTypeNotDescribed)
	}
	if d, err := r.base.FindDescriptorByName(name); err == nil {
		return nil, fmt.Errorf("reflection: look up %s: %w: it names a %s, not a message", name, ErrTypeNotDescribed, kindOf(d))
	}
	for {
		l, lead, err := r.join(name)
		if err != nil {
			return nil, err
		}
		if lead {
			r.lookup(ctx, name, l)
			return l.md, l.err
		}
		if r.onWait != nil && !l.finished() {
			r.onWait()
		}
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("reflection: look up %s: %w", name, ctx.Err())
		}
		if !l.abandoned {
			return l.md, l.err
		}
	}
}

// join returns the lookup of name to wait for, or a new one for the
// caller to lead (lead true); an error when the limit forbids a new one.
func (r *TypeResolver) join(name protoreflect.FullName) (l *typeLookup, lead bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.lookups[name]; l != nil && (!l.finished() || l.until.IsZero() || r.now().Before(l.until)) {
		return l, false, nil
	}
	if _, renewed := r.lookups[name]; !renewed && len(r.lookups) >= r.max {
		if !r.warned {
			r.warned = true
			r.logger.Warn("reflection: the backend's values named more types than the gateway looks up; it asks about no more of them until the backend's API changes",
				"limit", r.max, "type", string(name))
		}
		return nil, false, fmt.Errorf("reflection: look up %s: not asked: %d types were looked up already, the limit", name, r.max)
	}
	l = &typeLookup{done: make(chan struct{})}
	r.lookups[name] = l
	return l, true, nil
}

func (l *typeLookup) finished() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// lookup asks the backend about name and settles l with the answer.
func (r *TypeResolver) lookup(ctx context.Context, name protoreflect.FullName, l *typeLookup) {
	md, err := r.fetch(ctx, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	l.md, l.err = md, err
	switch {
	case err == nil || errors.Is(err, ErrTypeNotDescribed):
		r.logger.Debug("reflection: looked up a type the discovery did not fetch", "type", string(name), "described", err == nil)
	case ctx.Err() != nil:
		// The caller left: nothing was learnt, and whoever comes next
		// asks afresh.
		l.abandoned = true
		delete(r.lookups, name)
	default:
		l.until = r.now().Add(lookupRetry)
		r.logger.Debug("reflection: looking up a type failed", "type", string(name), "err", err)
	}
	close(l.done)
}

// fetch asks the backend for the file declaring name and what it imports,
// and builds them.
// The lookup's time runs from the moment it is asked for, its wait for
// an earlier lookup of another type included: a backend whose reflection
// stalls costs each caller one LookupTimeout, not one per lookup queued
// before its own.
func (r *TypeResolver) fetch(ctx context.Context, name protoreflect.FullName) (protoreflect.MessageDescriptor, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("reflection: look up %s: waiting for an earlier lookup: %w", name, ctx.Err())
	}
	defer func() { <-r.sem }()
	// An earlier lookup may have brought the file declaring name along.
	r.mu.Lock()
	md, ok := findMessage(r.extra, name)
	r.mu.Unlock()
	if ok {
		return md, nil
	}

	st, err := openStream(ctx, r.conn, r.method)
	if err != nil {
		return nil, fmt.Errorf("reflection: look up %s: %w", name, lookupErr(ctx, err))
	}
	defer st.close()
	files, err := st.fileContainingSymbol(string(name))
	if err != nil {
		if isTransportError(err) {
			return nil, fmt.Errorf("reflection: look up %s: %w", name, lookupErr(ctx, err))
		}
		return nil, fmt.Errorf("reflection: look up %s: %w: %w", name, ErrTypeNotDescribed, err)
	}
	known := knownFiles{r.base, r.extra}
	p := newPool(r.logger, "reflection lookup")
	p.known = known
	for _, f := range files {
		// The server sends every import along on a new stream; the ones
		// already built stay as they are.
		if _, err := known.FindFileByPath(f.GetName()); err != nil {
			p.add(f)
		}
	}
	if err := complete(st, p, r.logger); err != nil {
		return nil, fmt.Errorf("reflection: look up %s: %w", name, lookupErr(ctx, err))
	}
	p.repair()
	sym, ok := p.lookup(string(name))
	if !ok || sym.kind != symMessage {
		return nil, fmt.Errorf("reflection: look up %s: %w: the server sent no file declaring it as a message", name, ErrTypeNotDescribed)
	}
	fd, err := p.build(sym.file)
	if err != nil {
		return nil, fmt.Errorf("reflection: look up %s: %w: %w", name, ErrTypeNotDescribed, err)
	}
	d, err := p.reg.FindDescriptorByName(name)
	md, ok = d.(protoreflect.MessageDescriptor)
	if err != nil || !ok || d.ParentFile() != fd {
		return nil, fmt.Errorf("reflection: look up %s: %w: file %s does not declare it as a message", name, ErrTypeNotDescribed, fd.Path())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, path := range p.paths() {
		if built := p.built[path]; built != nil {
			if err := r.extra.RegisterFile(built); err != nil {
				r.logger.Debug("reflection: a looked-up file clashes with an earlier one; its types stay reachable through the lookup that fetched them", "file", path, "err", err)
			}
		}
	}
	return md, nil
}

// lookupErr is ctxErr for a lookup: a stream the backend ended with
// DEADLINE_EXCEEDED is the lookup's time up even before ctx says so, for
// the server, which learns the deadline from the request, may see it
// pass a moment before the gateway does.
func lookupErr(ctx context.Context, err error) error {
	if ctx.Err() == nil && status.Code(err) == codes.DeadlineExceeded {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return ctxErr(ctx, err)
}

// findMessage finds the message name in files.
func findMessage(files *protoregistry.Files, name protoreflect.FullName) (protoreflect.MessageDescriptor, bool) {
	d, err := files.FindDescriptorByName(name)
	if err != nil {
		return nil, false
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	return md, ok
}

func kindOf(d protoreflect.Descriptor) string {
	switch d.(type) {
	case protoreflect.EnumDescriptor:
		return "enum"
	case protoreflect.ServiceDescriptor:
		return "service"
	case protoreflect.MethodDescriptor:
		return "method"
	case protoreflect.FieldDescriptor:
		return "field"
	case protoreflect.EnumValueDescriptor:
		return "enum value"
	}
	return "declaration"
}

// knownFiles are the files a lookup builds against: the discovery's, then
// those of earlier lookups.
type knownFiles []*protoregistry.Files

func (k knownFiles) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	for _, f := range k {
		if fd, err := f.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return nil, protoregistry.NotFound
}

func (k knownFiles) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, f := range k {
		if d, err := f.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}
