package descriptors_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/internal/reflecttest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// The API of the lookup tests, shaped as Temporal's: the service's file
// does not import the error details' file, which imports the service's
// file, a file of its own and a bundled one; the server's reflection
// serves them all.
const (
	thingsFile = `name: "things/v1/things.proto" package: "things.v1" syntax: "proto3"
		dependency: "google/protobuf/any.proto"
		message_type { name: "Thing"
			field { name: "name" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "name" }
			field { name: "extra" number: 2 type: TYPE_MESSAGE type_name: ".google.protobuf.Any" label: LABEL_OPTIONAL json_name: "extra" } }
		service { name: "Things" method { name: "Get" input_type: ".things.v1.Thing" output_type: ".things.v1.Thing" } }`
	refFile = `name: "things/errors/v1/ref.proto" package: "things.errors.v1" syntax: "proto3"
		message_type { name: "Ref" field { name: "id" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "id" } }`
	failuresFile = `name: "things/errors/v1/failures.proto" package: "things.errors.v1" syntax: "proto3"
		dependency: "things/v1/things.proto" dependency: "things/errors/v1/ref.proto" dependency: "google/protobuf/timestamp.proto"
		message_type { name: "NotFoundFailure"
			field { name: "namespace" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "namespace" }
			field { name: "existing" number: 2 type: TYPE_MESSAGE type_name: ".things.v1.Thing" label: LABEL_OPTIONAL json_name: "existing" }
			field { name: "ref" number: 3 type: TYPE_MESSAGE type_name: ".things.errors.v1.Ref" label: LABEL_OPTIONAL json_name: "ref" }
			field { name: "at" number: 4 type: TYPE_MESSAGE type_name: ".google.protobuf.Timestamp" label: LABEL_OPTIONAL json_name: "at" } }
		message_type { name: "AlreadyStartedFailure"
			field { name: "run_id" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "runId" } }`
)

// lookupAPI is the files above as a grpc-go reflection server serves
// them: Things listed, every file described.
type lookupAPI struct{ files *protoregistry.Files }

func newLookupAPI(t *testing.T) *lookupAPI {
	t.Helper()
	files := new(protoregistry.Files)
	for _, text := range []string{thingsFile, refFile, failuresFile} {
		fd, err := protodesc.NewFile(fileProto(t, text), chain{files, protoregistry.GlobalFiles})
		if err != nil {
			t.Fatal(err)
		}
		if err := files.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
	}
	return &lookupAPI{files: files}
}

func (a *lookupAPI) GetServiceInfo() map[string]grpc.ServiceInfo {
	return map[string]grpc.ServiceInfo{"things.v1.Things": {}}
}

func (a *lookupAPI) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	return chain{a.files, protoregistry.GlobalFiles}.FindFileByPath(p)
}

func (a *lookupAPI) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	return chain{a.files, protoregistry.GlobalFiles}.FindDescriptorByName(n)
}

type chain []*protoregistry.Files

func (c chain) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	for _, f := range c {
		if fd, err := f.FindFileByPath(p); err == nil {
			return fd, nil
		}
	}
	return nil, protoregistry.NotFound
}

func (c chain) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, f := range c {
		if d, err := f.FindDescriptorByName(n); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

// startLookupAPI serves the lookup API with grpc-go's reflection server
// and discovers it.
func startLookupAPI(t *testing.T, c *reflecttest.SymbolCounter, opts *descriptors.ServerReflectionOptions) *descriptors.Result {
	t.Helper()
	api := newLookupAPI(t)
	addr := startServer(t, func(s *grpc.Server) {
		refv1.RegisterServerReflectionServer(s, reflection.NewServerV1(reflection.ServerOptions{Services: api, DescriptorResolver: api}))
	}, grpc.StreamInterceptor(c.Interceptor))
	res, err := discover(t, addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resolver == nil {
		t.Fatal("server reflection's Result has no Resolver")
	}
	return res
}

// TestTypeResolverLooksUpOnce: a type the services' files do not reach
// is not in Files; Resolve asks the backend for it once, builds it against
// the discovered files (its field of a discovered type has the very
// descriptor Files holds), and answers from what it learnt afterwards,
// a sibling type of the same file included. The backend is asked nothing
// while discovering it, and Lookup never asks.
func TestTypeResolverLooksUpOnce(t *testing.T) {
	t.Parallel()
	var c reflecttest.SymbolCounter
	res := startLookupAPI(t, &c, nil)
	const name = "things.errors.v1.NotFoundFailure"
	if _, err := res.Files.FindDescriptorByName(name); err == nil {
		t.Fatalf("discovery fetched %s, which no service's file imports: the test needs it unknown", name)
	}
	if c.Count(name) != 0 {
		t.Fatalf("discovery asked for %s", name)
	}
	if md := res.Resolver.Lookup(name); md != nil {
		t.Fatalf("Lookup found %s before any Resolve", name)
	}
	if c.Count(name) != 0 {
		t.Fatal("Lookup asked the backend")
	}

	md, err := res.Resolver.Resolve(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if md.FullName() != name || md.Fields().Len() != 4 {
		t.Fatalf("resolved %s with %d fields", md.FullName(), md.Fields().Len())
	}
	thing, err := res.Files.FindDescriptorByName("things.v1.Thing")
	if err != nil {
		t.Fatal(err)
	}
	if got := md.Fields().ByName("existing").Message(); got != thing {
		t.Errorf("field existing: %v, want the discovered things.v1.Thing itself", got)
	}
	if got := md.Fields().ByName("ref").Message(); got == nil || got.IsPlaceholder() || got.FullName() != "things.errors.v1.Ref" {
		t.Errorf("field ref: %v, want a built things.errors.v1.Ref", got)
	}
	if got := md.Fields().ByName("at").Message(); got == nil || got.IsPlaceholder() || got.FullName() != "google.protobuf.Timestamp" {
		t.Errorf("field at: %v, want google.protobuf.Timestamp", got)
	}

	for range 3 {
		again, err := res.Resolver.Resolve(t.Context(), name)
		if err != nil || again != md {
			t.Fatalf("Resolve again: %v, %v; want the same descriptor", again, err)
		}
	}
	if got := res.Resolver.Lookup(name); got != md {
		t.Errorf("Lookup after Resolve: %v", got)
	}
	sibling, err := res.Resolver.Resolve(t.Context(), "things.errors.v1.AlreadyStartedFailure")
	if err != nil || sibling.ParentFile() != md.ParentFile() {
		t.Fatalf("sibling: %v, %v", sibling, err)
	}
	if n := c.Count(name); n != 1 {
		t.Errorf("the backend was asked for %s %d times, want 1", name, n)
	}
	if n := c.Count("things.errors.v1.AlreadyStartedFailure"); n != 0 {
		t.Errorf("the backend was asked for the sibling %d times; its file came with the first lookup", n)
	}
}

// TestTypeResolverNotDescribed: a type the backend's reflection does not
// know, a name that is no type and a name of something else than a
// message give ErrTypeNotDescribed; the first is asked once, the others
// never.
func TestTypeResolverNotDescribed(t *testing.T) {
	t.Parallel()
	var c reflecttest.SymbolCounter
	res := startLookupAPI(t, &c, nil)
	for range 3 {
		_, err := res.Resolver.Resolve(t.Context(), "ghost.v1.Secret")
		if !errors.Is(err, descriptors.ErrTypeNotDescribed) {
			t.Fatalf("ghost: %v, want ErrTypeNotDescribed", err)
		}
	}
	if n := c.Count("ghost.v1.Secret"); n != 1 {
		t.Errorf("asked for ghost.v1.Secret %d times, want 1", n)
	}
	for _, name := range []protoreflect.FullName{"not a name", "", "things.v1.Things", "things.v1.Thing.name"} {
		before := c.Count(string(name)) // discovery asks for the service
		if _, err := res.Resolver.Resolve(t.Context(), name); !errors.Is(err, descriptors.ErrTypeNotDescribed) {
			t.Errorf("%q: %v, want ErrTypeNotDescribed", name, err)
		}
		if n := c.Count(string(name)); n != before {
			t.Errorf("%q was asked for", name)
		}
	}
	// A discovered message needs no lookup.
	if md, err := res.Resolver.Resolve(t.Context(), "things.v1.Thing"); err != nil || md.FullName() != "things.v1.Thing" {
		t.Errorf("things.v1.Thing: %v, %v", md, err)
	}
	if n := c.Count("things.v1.Thing"); n != 0 {
		t.Errorf("things.v1.Thing was asked for %d times", n)
	}
}

// TestTypeResolverLimit: past MaxLookups names (described or not), the
// resolver asks nothing more, and says so with an error that is not
// ErrTypeNotDescribed; what it learnt stays.
func TestTypeResolverLimit(t *testing.T) {
	t.Parallel()
	var c reflecttest.SymbolCounter
	var log testkit.SyncBuffer
	res := startLookupAPI(t, &c, &descriptors.ServerReflectionOptions{MaxLookups: 2, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if _, err := res.Resolver.Resolve(t.Context(), "things.errors.v1.NotFoundFailure"); err != nil {
		t.Fatal(err)
	}
	if _, err := res.Resolver.Resolve(t.Context(), "ghost.v1.One"); !errors.Is(err, descriptors.ErrTypeNotDescribed) {
		t.Fatal(err)
	}
	for _, name := range []string{"ghost.v1.Two", "ghost.v1.Three", "ghost.v1.Two"} {
		_, err := res.Resolver.Resolve(t.Context(), protoreflect.FullName(name))
		if err == nil || errors.Is(err, descriptors.ErrTypeNotDescribed) {
			t.Errorf("%s past the limit: %v, want a refusal to ask", name, err)
		}
		if n := c.Count(name); n != 0 {
			t.Errorf("%s was asked for past the limit", name)
		}
	}
	if _, err := res.Resolver.Resolve(t.Context(), "things.errors.v1.NotFoundFailure"); err != nil {
		t.Errorf("a type learnt before the limit: %v", err)
	}
	if l := log.String(); !strings.Contains(l, "looks up") || !strings.Contains(l, "limit=2") {
		t.Errorf("the limit was not logged:\n%s", log.String())
	}
}

// TestTypeResolverSingleFlight: concurrent Resolves of one type, made
// while the backend holds the first request, share that lookup: the
// backend is asked once and every caller gets the type.
func TestTypeResolverSingleFlight(t *testing.T) {
	t.Parallel()
	const name = "things.errors.v1.NotFoundFailure"
	var c reflecttest.SymbolCounter
	held := make(chan string, 1)
	release := c.Hold(name, held)
	res := startLookupAPI(t, &c, nil)
	const callers = 8
	waiting := make(chan struct{}, callers)
	descriptors.SetOnWait(res.Resolver, func() { waiting <- struct{}{} })

	var wg sync.WaitGroup
	got := make([]protoreflect.MessageDescriptor, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { got[i], errs[i] = res.Resolver.Resolve(t.Context(), name) })
	}
	<-held
	for range callers - 1 {
		<-waiting
	}
	release()
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || got[i] == nil || got[i] != got[0] {
			t.Errorf("caller %d: %v, %v", i, got[i], errs[i])
		}
	}
	if n := c.Count(name); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
}

// TestTypeResolverBounded: a backend that does not answer costs a
// lookup LookupTimeout, after which the failure (not ErrTypeNotDescribed)
// is remembered for a while rather than asked again; a caller whose own
// ctx ends first leaves nothing behind, and the next caller asks afresh.
func TestTypeResolverBounded(t *testing.T) {
	t.Parallel()
	const name = "things.errors.v1.NotFoundFailure"
	var c reflecttest.SymbolCounter
	held := make(chan string, 4)
	defer c.Hold(name, held)()
	res := startLookupAPI(t, &c, &descriptors.ServerReflectionOptions{LookupTimeout: 100 * time.Millisecond})

	start := time.Now()
	_, err := res.Resolver.Resolve(t.Context(), name)
	if err == nil || errors.Is(err, descriptors.ErrTypeNotDescribed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a backend that holds the request: %v, want the lookup's deadline", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the lookup took %s", took)
	}
	<-held
	if _, err := res.Resolver.Resolve(t.Context(), name); err == nil {
		t.Fatal("the failure was forgotten at once")
	}
	if n := c.Count(name); n != 1 {
		t.Errorf("asked %d times within the retry window, want 1", n)
	}

	// The caller's own ctx bounds its lookup, and a lookup it abandoned
	// is asked again by the next caller.
	other := "things.errors.v1.AlreadyStartedFailure"
	defer c.Hold(other, held)()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := res.Resolver.Resolve(ctx, protoreflect.FullName(other))
		done <- err
	}()
	<-held
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	go func() {
		_, err := res.Resolver.Resolve(t.Context(), protoreflect.FullName(other))
		done <- err
	}()
	<-held
	// The second request is held too, until its lookup's deadline.
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("next caller: %v", err)
	}
	if n := c.Count(other); n != 2 {
		t.Errorf("%s asked %d times, want 2: the abandoned lookup and the next caller's", other, n)
	}
}

// TestTypeResolverQueuedLookupBounded: a lookup queued behind another
// that the backend holds ends within its own LookupTimeout, its wait
// included, rather than one timeout per lookup before it; the failure is
// remembered like any lookup that timed out.
func TestTypeResolverQueuedLookupBounded(t *testing.T) {
	t.Parallel()
	const name = "things.errors.v1.Ref"
	var c reflecttest.SymbolCounter
	res := startLookupAPI(t, &c, &descriptors.ServerReflectionOptions{LookupTimeout: 100 * time.Millisecond})
	release := descriptors.HoldLookups(res.Resolver)
	defer func() { release() }()

	// Without the bound the lookup would wait for the caller's ctx.
	ctx, cancel := context.WithTimeout(t.Context(), testkit.WaitTimeout)
	defer cancel()
	_, err := res.Resolver.Resolve(ctx, name)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, descriptors.ErrTypeNotDescribed) || ctx.Err() != nil {
		t.Fatalf("a lookup queued behind a held one: %v, want its own deadline", err)
	}
	release()
	release = func() {}
	if _, err := res.Resolver.Resolve(ctx, name); err == nil {
		t.Error("the failure was forgotten at once")
	}
	if n := c.Count(name); n != 0 {
		t.Errorf("%s asked %d times, want 0: it never got its turn", name, n)
	}
}

// TestTypeResolverImportsNotSentAlong: against a server that sends only
// the file asked for, a lookup asks for the imports it does not know (the
// details' own file) and never for those discovery fetched.
func TestTypeResolverImportsNotSentAlong(t *testing.T) {
	t.Parallel()
	f := &fakeReflection{services: []string{"things.v1.Things"}, files: []*descriptorpb.FileDescriptorProto{
		fileProto(t, thingsFile), fileProto(t, refFile), fileProto(t, failuresFile),
	}}
	addr := startServer(t, func(s *grpc.Server) { refv1.RegisterServerReflectionServer(s, f) })
	res, err := discover(t, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.asked = nil
	f.mu.Unlock()
	md, err := res.Resolver.Resolve(t.Context(), "things.errors.v1.NotFoundFailure")
	if err != nil {
		t.Fatal(err)
	}
	if ref := md.Fields().ByName("ref").Message(); ref == nil || ref.IsPlaceholder() {
		t.Errorf("field ref: %v", ref)
	}
	f.mu.Lock()
	asked := slices.Clone(f.asked)
	f.mu.Unlock()
	want := []string{"symbol things.errors.v1.NotFoundFailure", "file things/errors/v1/ref.proto"}
	if !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}

// TestOverlayKeepsTheResolver: comments grafted from descriptor files do
// not take away server reflection's lookups; descriptor files alone have
// none.
func TestOverlayKeepsTheResolver(t *testing.T) {
	t.Parallel()
	withComment := fileProto(t, thingsFile)
	withComment.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
		{Path: []int32{6, 0}, Span: []int32{0, 0, 1}, LeadingComments: ptr(" Things are things.\n")},
	}}
	comments := sourceFunc(func(context.Context) (*descriptors.Result, error) {
		files := new(protoregistry.Files)
		fd, err := protodesc.NewFile(withComment, protoregistry.GlobalFiles)
		if err != nil {
			return nil, err
		}
		if err := files.RegisterFile(fd); err != nil {
			return nil, err
		}
		return &descriptors.Result{Files: files, Services: []protoreflect.ServiceDescriptor{fd.Services().Get(0)}}, nil
	})
	var c reflecttest.SymbolCounter
	base := startLookupAPI(t, &c, nil)
	res, err := descriptors.Overlay(sourceFunc(func(context.Context) (*descriptors.Result, error) { return base, nil }), comments, nil).Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res == base {
		t.Fatal("the overlay grafted nothing: the test needs a new Result")
	}
	if res.Resolver != base.Resolver {
		t.Errorf("overlay Resolver %p, want the base's %p", res.Resolver, base.Resolver)
	}
	for name, src := range map[string]descriptors.Source{
		"descriptor set": descriptors.NewDescriptorSetSource("testdata/zoo.binpb"),
		".proto files":   descriptors.NewProtoSource([]string{"../examples/zoo/proto", "../proto"}, []string{"zoo/v1/zoo.proto"}),
	} {
		if alone, err := src.Discover(t.Context()); err != nil || alone.Resolver != nil {
			t.Errorf("%s: Resolver %v, %v; want none: there is nobody to ask", name, alone.Resolver, err)
		}
	}
}

type sourceFunc func(context.Context) (*descriptors.Result, error)

func (f sourceFunc) Discover(ctx context.Context) (*descriptors.Result, error) { return f(ctx) }

func ptr[T any](v T) *T { return &v }
