package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	channelzsvc "google.golang.org/grpc/channelz/service"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// fakeAPI is a reflection server whose API a test changes at run time: it
// serves whatever files were last set, and answers every method with an
// empty message (which decodes as any message type).
type fakeAPI struct {
	// hold, when set, holds a call whose request contains "block" until
	// it is closed; held is told when such a call arrives.
	hold, held chan struct{}
	// reply, when set, is the answer to a call of the method (its full
	// name, "/pkg.Service/Method"), instead of an empty message.
	reply func(method string) proto.Message

	mu       sync.Mutex
	files    *protoregistry.Files
	services []string
	// lists counts the service listings asked for: one per discovery,
	// so a test can wait for refreshes to have happened.
	lists atomic.Int64
}

func (f *fakeAPI) set(t testing.TB, fdps ...*descriptorpb.FileDescriptorProto) {
	t.Helper()
	files := new(protoregistry.Files)
	var svcs []string
	for _, fdp := range fdps {
		fd, err := protodesc.NewFile(fdp, resolverChain{files, protoregistry.GlobalFiles})
		if err != nil {
			t.Fatal(err)
		}
		if err := files.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
		for i := range fd.Services().Len() {
			svcs = append(svcs, string(fd.Services().Get(i).FullName()))
		}
	}
	f.mu.Lock()
	f.files, f.services = files, svcs
	f.mu.Unlock()
}

func (f *fakeAPI) current() (*protoregistry.Files, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.files, f.services
}

func (f *fakeAPI) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	files, _ := f.current()
	return resolverChain{files, protoregistry.GlobalFiles}.FindFileByPath(p)
}

func (f *fakeAPI) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	files, _ := f.current()
	return resolverChain{files, protoregistry.GlobalFiles}.FindDescriptorByName(n)
}

func (f *fakeAPI) GetServiceInfo() map[string]grpc.ServiceInfo {
	f.lists.Add(1)
	_, svcs := f.current()
	m := make(map[string]grpc.ServiceInfo, len(svcs))
	for _, s := range svcs {
		m[s] = grpc.ServiceInfo{}
	}
	return m
}

type resolverChain []*protoregistry.Files

func (r resolverChain) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	for _, f := range r {
		if fd, err := f.FindFileByPath(p); err == nil {
			return fd, nil
		}
	}
	return nil, protoregistry.NotFound
}

func (r resolverChain) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, f := range r {
		if d, err := f.FindDescriptorByName(n); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

// serveFake serves api on addr ("127.0.0.1:0" for any port) and returns
// the address and a stop function (also run at cleanup).
func serveFake(t testing.TB, api *fakeAPI, addr string) (string, func()) {
	t.Helper()
	var lis net.Listener
	// The port of a stopped server may take a moment to free.
	testkit.WaitFor(t, "port "+addr+" to be free", func() bool {
		var err error
		lis, err = net.Listen("tcp", addr)
		return err == nil
	})
	gs := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		in := new(emptypb.Empty)
		if err := stream.RecvMsg(in); err != nil && err != io.EOF {
			return err
		}
		if api.hold != nil && strings.Contains(string(in.ProtoReflect().GetUnknown()), "block") {
			api.held <- struct{}{}
			<-api.hold
		}
		if api.reply != nil {
			method, _ := grpc.MethodFromServerStream(stream)
			return stream.SendMsg(api.reply(method))
		}
		return stream.SendMsg(new(emptypb.Empty))
	}))
	refv1.RegisterServerReflectionServer(gs, reflection.NewServerV1(reflection.ServerOptions{Services: api, DescriptorResolver: api}))
	go func() { _ = gs.Serve(lis) }()
	var once sync.Once
	stop := func() { once.Do(gs.Stop) }
	t.Cleanup(stop)
	return lis.Addr().String(), stop
}

// apiFile is a file of package pkg with one service and the given unary
// methods, each taking and returning the message Msg.
func apiFile(pkg, service string, methods ...*descriptorpb.MethodDescriptorProto) *descriptorpb.FileDescriptorProto {
	msg := "." + pkg + ".Msg"
	for _, m := range methods {
		m.InputType, m.OutputType = proto.String(msg), proto.String(msg)
	}
	return &descriptorpb.FileDescriptorProto{
		Name:       proto.String(strings.ReplaceAll(pkg, ".", "/") + "/" + strings.ToLower(service) + ".proto"),
		Package:    proto.String(pkg),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"mcpgateway/v1/annotations.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Msg"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("text"), JsonName: proto.String("text"), Number: proto.Int32(1),
				Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			}},
		}},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String(service), Method: methods}},
	}
}

func method(name string) *descriptorpb.MethodDescriptorProto {
	return &descriptorpb.MethodDescriptorProto{Name: proto.String(name)}
}

func methodWith(name string, opt *mcpgatewayv1.Tool) *descriptorpb.MethodDescriptorProto {
	mo := &descriptorpb.MethodOptions{}
	proto.SetExtension(mo, mcpgatewayv1.E_Tool, opt)
	return &descriptorpb.MethodDescriptorProto{Name: proto.String(name), Options: mo}
}

// newGateway serves backends (name -> address) over HTTP; cleanup shuts
// it down before the connections close.
func newGateway(t testing.TB, backends []gateway.Backend, opts *gateway.Options) (*gateway.Gateway, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, backends, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		srv.Close()
	})
	return g, srv.URL
}

func dialBackend(t testing.TB, name, addr string) gateway.Backend {
	t.Helper()
	conn, err := backendconn.Dial(addr, backendconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gateway.Backend{Name: name, Address: addr, Conn: conn}
}

func toolNames(g *gateway.Gateway) []string {
	var names []string
	for _, tl := range g.Tools().Tools() {
		names = append(names, tl.Name)
	}
	return names
}

func toolByName(t *testing.T, g *gateway.Gateway, name string) mcp.Tool {
	t.Helper()
	for _, tl := range g.Tools().Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s in %v", name, toolNames(g))
	return mcp.Tool{}
}

func readyz(t *testing.T, base string) (int, gateway.Readiness) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r gateway.Readiness
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, r
}

func TestTwoBackendsCollisions(t *testing.T) {
	t.Parallel()
	zooA, zooB := startBackend(t), startBackend(t)
	other := &fakeAPI{}
	other.set(t, apiFile("shop.v1", "ShopService", method("GetItem")))
	shop, _ := serveFake(t, other, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{
		dialBackend(t, "zoo", zooA.addr), dialBackend(t, "zoo2", zooB.addr), dialBackend(t, "shop", shop),
	}, nil)
	names := toolNames(g)
	// Only the colliding tools are prefixed; the shop's stay as they were.
	for _, want := range []string{"ShopService_GetItem", "zoo_ZooService_GetAnimal", "zoo2_ZooService_GetAnimal"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
	if slices.Contains(names, "ZooService_GetAnimal") {
		t.Errorf("colliding tool not prefixed: %v", names)
	}
	if code, r := readyz(t, base); code != 200 || !r.Ready || len(r.Backends) != 3 || r.Backends["shop"].Tools != 1 {
		t.Errorf("readyz %d %+v", code, r)
	}

	cs := connect(t, base+"/mcp", "2025-11-25")
	res := call(t, cs, "zoo2_ZooService_GetAnimal", map[string]any{"id": "leo"})
	if res.IsError || !strings.Contains(text(t, res), `"leo"`) {
		t.Errorf("call through the second backend: %+v", res)
	}
	if res := call(t, cs, "ShopService_GetItem", map[string]any{"text": "x"}); res.IsError {
		t.Errorf("call to the fake: %+v", res)
	}
}

func TestBackendValidation(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	conn := dialBackend(t, "", b.addr).Conn
	ctx := context.Background()
	for _, c := range []struct {
		backends []gateway.Backend
		want     string
	}{
		{nil, "no backends"},
		{[]gateway.Backend{{Name: "a", Conn: conn}, {Conn: conn}}, `backend name ""`},
		{[]gateway.Backend{{Name: "a", Conn: conn}, {Name: "a", Conn: conn}}, `"a" is used twice`},
		{[]gateway.Backend{{Name: "A.b", Conn: conn}, {Name: "c", Conn: conn}}, `backend name "A.b"`},
		{[]gateway.Backend{{Name: "a", Conn: conn, NoReflection: true}}, "reflection disabled and no descriptor files"},
	} {
		if _, err := gateway.New(ctx, c.backends, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.backends, err, c.want)
		}
	}
	if _, err := gateway.New(ctx, []gateway.Backend{{Name: "a", Conn: conn}}, &gateway.Options{Catalog: gateway.CatalogOptions{Include: []string{"a/["}}}); err == nil || !strings.Contains(err.Error(), "Options.Catalog.Include") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestFilters(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	for _, c := range []struct {
		name             string
		include, exclude []string
		health           bool
		want             []string
	}{
		{"service", []string{"zoo.v1.ZooService/Get*"}, nil, false, []string{"ZooService_GetAnimal", "ZooService_GetNextFeedingTime", "ZooService_GetTaxonomy"}},
		{"service without slash", []string{"zoo.v1.ZooService"}, []string{"*/*Animal*", "*/*Feed*", "*/*Taxonomy", "*/*Observations", "*/ChatWithKeeper"}, false, []string{"ZooService_ListEnclosures"}},
		{"package", []string{"zoo.v1.*/Delete*"}, nil, false, []string{"ZooService_DeleteAnimal"}},
		{"health hidden", []string{"*/Check"}, nil, false, nil},
		{"health exposed", []string{"grpc.health.v1.Health/Check"}, nil, true, []string{"Health_Check"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Include: c.include, Exclude: c.exclude, ExposeHealth: c.health}})
			if got := toolNames(g); !slices.Equal(got, c.want) {
				t.Errorf("tools %v, want %v", got, c.want)
			}
		})
	}
}

// TestInternalServices: the internal services a server runs beside its
// own (here gRPC's real channelz service beside the zoo, and a Temporal
// frontend's AdminService) are not tools by default, and one log line per
// backend names them and how to expose them; services whose names only
// look administrative stay; ExposeInternal exposes them all, and an
// include pattern alone does not.
func TestInternalServices(t *testing.T) {
	gs := grpc.NewServer()
	zoo.Register(gs, zoo.NewServer())
	channelzsvc.RegisterChannelzServiceToServer(gs)
	reflection.Register(gs)
	zooAddr := testkit.ServeLoopback(t, gs)
	temporal := &fakeAPI{}
	temporal.set(t,
		apiFile("temporal.api.workflowservice.v1", "WorkflowService", method("StartWorkflowExecution")),
		apiFile("temporal.server.api.adminservice.v1", "AdminService", method("DeleteWorkflowExecution"), method("PurgeDLQMessages"), method("ListClusterMembers")),
		// Administrative names that are users' APIs: hidden by no guess.
		apiFile("temporal.api.operatorservice.v1", "OperatorService", method("ListSearchAttributes")),
		apiFile("google.spanner.admin.database.v1", "DatabaseAdmin", method("ListDatabases")),
		apiFile("shop.v1", "AdminService", method("RefundOrder")),
	)
	temporalAddr, _ := serveFake(t, temporal, "127.0.0.1:0")
	backends := func() []gateway.Backend {
		return []gateway.Backend{dialBackend(t, "zoo", zooAddr), dialBackend(t, "temporal", temporalAddr)}
	}
	internal := func(names []string) []string {
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, "Channelz_") || strings.HasPrefix(n, "AdminService_") && n != "AdminService_RefundOrder" {
				out = append(out, n)
			}
		}
		return out
	}

	var logs testkit.SyncBuffer
	g, _ := newGateway(t, backends(), &gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	names := toolNames(g)
	if got := internal(names); len(got) > 0 {
		t.Errorf("internal services exposed by default: %v", got)
	}
	for _, want := range []string{"WorkflowService_StartWorkflowExecution", "OperatorService_ListSearchAttributes", "DatabaseAdmin_ListDatabases", "AdminService_RefundOrder", "ZooService_GetAnimal"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s hidden: a service is internal only when InternalServices names it exactly; tools %v", want, names)
		}
	}
	var lines []string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "internal services not exposed") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 ||
		!strings.Contains(lines[0]+lines[1], `backend=zoo services=[grpc.channelz.v1.Channelz] methods=`) ||
		!strings.Contains(lines[0]+lines[1], `backend=temporal services=[temporal.server.api.adminservice.v1.AdminService] methods=3`) ||
		!strings.Contains(lines[0], "--expose-internal") {
		t.Errorf("want one line per backend naming its hidden services and how to expose them, got:\n%s", strings.Join(lines, ""))
	}

	// The fixed rule comes before the filters, as for health.
	g, _ = newGateway(t, backends(), &gateway.Options{Catalog: gateway.CatalogOptions{Include: []string{"temporal.server.api.adminservice.v1.AdminService"}}})
	if got := toolNames(g); len(got) != 0 {
		t.Errorf("an include pattern alone exposed %v", got)
	}

	logs = testkit.SyncBuffer{}
	g, _ = newGateway(t, backends(), &gateway.Options{Catalog: gateway.CatalogOptions{ExposeInternal: true}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	got := internal(toolNames(g))
	for _, want := range []string{"AdminService_DeleteWorkflowExecution", "AdminService_PurgeDLQMessages", "AdminService_ListClusterMembers", "Channelz_GetServers"} {
		if !slices.Contains(got, want) {
			t.Errorf("ExposeInternal: %s missing from %v", want, got)
		}
	}
	if strings.Contains(logs.String(), "internal services not exposed") {
		t.Errorf("ExposeInternal still logs hidden services:\n%s", logs.String())
	}

	// docs/tools.md lists every internal service, so an operator can see
	// what is hidden before it is.
	readme, err := os.ReadFile("../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range gateway.InternalServices() {
		if !strings.Contains(string(readme), "`"+s+"`") {
			t.Errorf("docs/tools.md does not list the internal service %s", s)
		}
	}
}

// optionsFile exercises every proto option, including the invalid cases
// that fall back to derived names.
func optionsFile() *descriptorpb.FileDescriptorProto {
	f := apiFile("opts.v1", "Things",
		methodWith("Lookup", &mcpgatewayv1.Tool{Name: "lookup_thing", Title: "Look up a thing", Description: "Finds one thing by its text.", ReadOnlyHint: proto.Bool(true), OpenWorldHint: proto.Bool(false)}),
		methodWith("Remove", &mcpgatewayv1.Tool{Title: "Remove a thing", DestructiveHint: proto.Bool(true), IdempotentHint: proto.Bool(true)}),
		methodWith("Secret", &mcpgatewayv1.Tool{Hidden: true}),
		methodWith("BadName", &mcpgatewayv1.Tool{Name: "has.dots"}),
		methodWith("Dup1", &mcpgatewayv1.Tool{Name: "same"}),
		methodWith("Dup2", &mcpgatewayv1.Tool{Name: "same"}),
		methodWith("Clash", &mcpgatewayv1.Tool{Name: "p_Things_Plain"}),
		method("Plain"),
	)
	so := &descriptorpb.ServiceOptions{}
	proto.SetExtension(so, mcpgatewayv1.E_Service, &mcpgatewayv1.Service{NamePrefix: "p_"})
	f.Service[0].Options = so
	hidden := &descriptorpb.ServiceDescriptorProto{Name: proto.String("Internal"), Method: []*descriptorpb.MethodDescriptorProto{
		{Name: proto.String("Do"), InputType: proto.String(".opts.v1.Msg"), OutputType: proto.String(".opts.v1.Msg")},
	}}
	ho := &descriptorpb.ServiceOptions{}
	proto.SetExtension(ho, mcpgatewayv1.E_Service, &mcpgatewayv1.Service{Hidden: true})
	hidden.Options = ho
	f.Service = append(f.Service, hidden)
	return f
}

func TestProtoOptions(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	api.set(t, optionsFile())
	addr, _ := serveFake(t, api, "127.0.0.1:0")

	// The same file as a descriptor set on disk, for the other source.
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(descriptorpb.File_google_protobuf_descriptor_proto),
		protodesc.ToFileDescriptorProto(mcpgatewayv1.File_mcpgateway_v1_annotations_proto),
		optionsFile(),
	}}
	raw, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opts.binpb")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, src := range []string{"reflection", "descriptor set"} {
		t.Run(src, func(t *testing.T) {
			b := dialBackend(t, "opts", addr)
			if src == "descriptor set" {
				b.Files, b.NoReflection = descriptors.NewDescriptorSetSource(path), true
			}
			g, _ := newGateway(t, []gateway.Backend{b}, nil)
			want := []string{"p_Things_BadName", "p_Things_Clash", "p_Things_Dup1", "p_Things_Dup2", "lookup_thing", "p_Things_Plain", "p_Things_Remove"}
			if got := toolNames(g); !slices.Equal(got, want) {
				t.Fatalf("tools %v, want %v", got, want)
			}
			lookup := toolByName(t, g, "lookup_thing")
			if lookup.Title != "Look up a thing" || lookup.Description != "Finds one thing by its text." {
				t.Errorf("lookup: title %q description %q", lookup.Title, lookup.Description)
			}
			// The option's hints win; every hint is set, the others from
			// the method's structure (Plain: nothing known, the
			// conservative default).
			for name, want := range map[string][4]bool{
				"lookup_thing":    {true, false, true, false},
				"p_Things_Remove": {false, true, true, true},
				"p_Things_Plain":  {false, true, false, true},
			} {
				a := toolByName(t, g, name).Annotations
				if a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil ||
					[4]bool{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint} != want {
					t.Errorf("%s annotations: %s, want readOnly, destructive, idempotent, openWorld %v", name, showHints(a), want)
				}
			}
			if a := toolByName(t, g, "lookup_thing").Annotations; a.Title != "Look up a thing" {
				t.Errorf("lookup annotations title %q", a.Title)
			}
		})
	}
}

// TestZooOptions: the demo's own options arrive through reflection.
func TestZooOptions(t *testing.T) {
	t.Parallel()
	_, g, _ := startGateway(t, nil)
	get := toolByName(t, g, "ZooService_GetAnimal")
	if get.Title != "Look up an animal" || get.Annotations == nil || get.Annotations.OpenWorldHint == nil || *get.Annotations.OpenWorldHint || !*get.Annotations.ReadOnlyHint {
		t.Errorf("GetAnimal: %+v %+v", get, get.Annotations)
	}
	del := toolByName(t, g, "ZooService_DeleteAnimal")
	if del.Title != "Remove an animal" || del.Annotations == nil || del.Annotations.DestructiveHint == nil || !*del.Annotations.DestructiveHint {
		t.Errorf("DeleteAnimal: %+v %+v", del, del.Annotations)
	}
}

// TestDescriptorSetFallback: a backend without reflection is served from a
// descriptor set given as an overlay, and the set's comments are used when
// reflection exists.
func TestDescriptorSetFallback(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	f := apiFile("doc.v1", "Docs", method("Read"))
	f.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
		{Path: []int32{6, 0, 2, 0}, Span: []int32{1, 0, 10}, LeadingComments: proto.String(" Reads a document.\n")},
	}}
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(descriptorpb.File_google_protobuf_descriptor_proto),
		protodesc.ToFileDescriptorProto(mcpgatewayv1.File_mcpgateway_v1_annotations_proto), f,
	}}
	raw, _ := proto.Marshal(set)
	path := filepath.Join(t.TempDir(), "doc.binpb")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	api.set(t, apiFile("doc.v1", "Docs", method("Read")))
	withRefl, _ := serveFake(t, api, "127.0.0.1:0")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bare := grpc.NewServer()
	go func() { _ = bare.Serve(lis) }()
	t.Cleanup(bare.Stop)

	for name, addr := range map[string]string{"overlay": withRefl, "fallback": lis.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			b := dialBackend(t, "docs", addr)
			b.Files = descriptors.NewDescriptorSetSource(path)
			g, _ := newGateway(t, []gateway.Backend{b}, nil)
			if d := toolByName(t, g, "Docs_Read").Description; d != "Reads a document." {
				t.Errorf("description %q", d)
			}
		})
	}
}

// listChanges counts notifications/tools/list_changed a client receives.
type listChanges struct {
	mu            sync.Mutex
	tools, resour int
	kick          chan struct{}
}

func (l *listChanges) options() *sdk.ClientOptions {
	l.kick = make(chan struct{}, 100)
	return &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			l.mu.Lock()
			l.tools++
			l.mu.Unlock()
			l.kick <- struct{}{}
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			l.mu.Lock()
			l.resour++
			l.mu.Unlock()
		},
	}
}

func (l *listChanges) counts() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tools, l.resour
}

func connectNotified(t *testing.T, url, version string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "refresh", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// waitNotified waits until the gateway has exactly one notification
// stream open, the client's just connected: a change made before it
// opens would not be notified. (The subtests of one gateway connect one
// client at a time, and the previous one's stream may still be closing.)
func waitNotified(t *testing.T, g *gateway.Gateway) {
	t.Helper()
	testkit.WaitFor(t, "the client's notification stream to open", func() bool { return g.NotificationStreams("") == 1 })
}

func listNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name+"|"+tl.Description)
	}
	return names
}

// TestRefresh: a method added, changed and removed at the backend reaches
// connected clients as list_changed, on every revision's delivery path.
func TestRefresh(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			api := &fakeAPI{}
			api.set(t, apiFile("svc.v1", "S", method("A")))
			addr, _ := serveFake(t, api, "127.0.0.1:0")
			g, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond}})
			var lc listChanges
			cs := connectNotified(t, base+"/mcp", v, lc.options())
			if got := toolNames(g); !slices.Equal(got, []string{"S_A"}) {
				t.Fatalf("tools %v", got)
			}
			waitNotified(t, g)

			steps := []struct {
				name string
				file *descriptorpb.FileDescriptorProto
				want []string
			}{
				{"add", apiFile("svc.v1", "S", method("A"), method("B")), []string{"S_A", "S_B"}},
				{"change", apiFile("svc.v1", "S", methodWith("A", &mcpgatewayv1.Tool{Description: "now described"}), method("B")), []string{"S_A|now described", "S_B"}},
				{"remove", apiFile("svc.v1", "S", method("B")), []string{"S_B"}},
			}
			for i, s := range steps {
				api.set(t, s.file)
				select {
				case <-lc.kick:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: no list_changed", s.name)
				}
				names := listNames(t, cs)
				for _, w := range s.want {
					if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, w) }) {
						t.Errorf("%s: %v lacks %s", s.name, names, w)
					}
				}
				if len(names) != len(s.want) {
					t.Errorf("%s: %v, want %d tools", s.name, names, len(s.want))
				}
				if n, _ := lc.counts(); n != i+1 {
					t.Errorf("%s: %d notifications so far, want %d", s.name, n, i+1)
				}
			}
			// An unchanged backend causes no notification, however often it
			// is refreshed: three more discoveries start, so at least two
			// have ended, each finding nothing new.
			n0 := api.lists.Load()
			testkit.WaitFor(t, "three more refreshes", func() bool { return api.lists.Load() >= n0+3 })
			if n, _ := lc.counts(); n != len(steps) {
				t.Errorf("notifications after quiet refreshes: %d, want %d", n, len(steps))
			}
		})
	}
}

// TestInFlightCallKeepsItsTool: a call that started before a swap that
// removes its tool finishes on the tool it started with.
func TestInFlightCallKeepsItsTool(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{hold: make(chan struct{}), held: make(chan struct{}, 1)}
	api.set(t, apiFile("svc.v1", "S", method("Slow")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond}})
	cs := connect(t, base+"/mcp", "2025-11-25")
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "S_Slow", Arguments: map[string]any{"text": "block"}})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	<-api.held
	api.set(t, apiFile("svc.v1", "S", method("Other")))
	testkit.WaitFor(t, "the swap", func() bool { return slices.Equal(toolNames(g), []string{"S_Other"}) })
	close(api.hold)
	if res := <-done; res.IsError {
		t.Errorf("in-flight call after its tool was removed: %+v", res.Content[0])
	}
}

// TestLateBackend: a backend down at start is served once it appears, and
// /readyz flips; then it dies (keeping its tools, calls failing as tool
// errors) and returns.
func TestLateBackend(t *testing.T) {
	t.Parallel()
	// Reserve a port, then free it: the backend will appear there later.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()

	zoo := startBackend(t)
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zoo.addr), dialBackend(t, "late", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: -1}})
	if code, r := readyz(t, base); code != 503 || r.Ready || r.Backends["late"].Discovered || r.Backends["late"].Error == "" || !r.Backends["zoo"].Ready {
		t.Fatalf("readyz before: %d %+v", code, r)
	}
	var lc listChanges
	cs := connectNotified(t, base+"/mcp", "2025-11-25", lc.options())
	waitNotified(t, g)

	api := &fakeAPI{}
	api.set(t, apiFile("late.v1", "Late", method("Hello")))
	_, stop := serveFake(t, api, addr)
	select {
	case <-lc.kick:
	case <-time.After(15 * time.Second):
		t.Fatal("no list_changed when the late backend appeared")
	}
	if !slices.Contains(toolNames(g), "Late_Hello") {
		t.Fatalf("tools %v", toolNames(g))
	}
	testkit.WaitFor(t, "readyz 200", func() bool { code, _ := readyz(t, base); return code == 200 })

	// It dies: readiness drops, its tools stay, calls fail as tool errors.
	stop()
	testkit.WaitFor(t, "readyz 503 after the backend died", func() bool { code, _ := readyz(t, base); return code == 503 })
	if !slices.Contains(toolNames(g), "Late_Hello") {
		t.Errorf("tools of a dead backend were dropped: %v", toolNames(g))
	}
	res := call(t, cs, "Late_Hello", map[string]any{})
	if !res.IsError || !strings.Contains(text(t, res), "UNAVAILABLE") {
		t.Errorf("call to a dead backend: %+v", res)
	}

	// It returns with another API: discovered again without a timer.
	api.set(t, apiFile("late.v1", "Late", method("Hello"), method("Again")))
	serveFake(t, api, addr)
	testkit.WaitFor(t, "the returned backend's new tool", func() bool { return slices.Contains(toolNames(g), "Late_Again") })
	testkit.WaitFor(t, "readyz 200 again", func() bool { code, _ := readyz(t, base); return code == 200 })
	if res := call(t, cs, "Late_Again", map[string]any{}); res.IsError {
		t.Errorf("call after return: %+v", res)
	}
}

// TestReadyMeansListed: a backend discovered after start makes /readyz
// 200 only once the catalog clients list holds its tools, in typed mode
// (tools/list) and in search mode (search_tools finds it by name). The
// gateway is held at the moment between the discovery and the swap of
// the new catalog: /readyz says 503 there (discovered, not listed), and
// a client that lists then does not see the tool yet.
func TestReadyMeansListed(t *testing.T) {
	t.Parallel()
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := lis.Addr().String()
			lis.Close()
			zoo := startBackend(t)
			g, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zoo.addr), dialBackend(t, "late", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: -1}, Search: gateway.SearchOptions{ToolMode: mode}})
			cs := connect(t, base+"/mcp", "2025-11-25")
			// lists reports whether a client finds the late backend's
			// tool, as it would look for it in this mode.
			lists := func() bool {
				if mode == gateway.ToolModeSearch {
					got := searchTools(t, cs, map[string]any{"query": "Late_Hello", "limit": 1})
					return len(got) == 1 && got[0].Name == "Late_Hello" && got[0].InputSchema != nil
				}
				return slices.ContainsFunc(listNames(t, cs), func(s string) bool { return strings.HasPrefix(s, "Late_Hello|") })
			}

			paused, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			g.SetBeforeCatalogSwap(func() {
				once.Do(func() { close(paused) })
				<-release
			})
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			api := &fakeAPI{}
			api.set(t, apiFile("late.v1", "Late", method("Hello")))
			serveFake(t, api, addr)
			select {
			case <-paused:
			case <-time.After(15 * time.Second):
				t.Fatal("the late backend was not discovered")
			}
			code, r := readyz(t, base)
			if code != 503 || r.Ready || !r.Backends["late"].Discovered || r.Backends["late"].Listed || r.Backends["late"].Ready || !r.Backends["zoo"].Listed {
				t.Errorf("readyz while the catalog with the late backend is being built: %d %+v; want 503, late discovered and not listed", code, r)
			}
			if lists() {
				t.Fatal("the late backend's tool is listed before its catalog was swapped in: the test holds nothing")
			}

			close(release)
			testkit.WaitFor(t, "readyz 200", func() bool { code, _ := readyz(t, base); return code == 200 })
			if !lists() {
				t.Errorf("/readyz says 200 and a client does not find Late_Hello")
			}
			if _, r := readyz(t, base); !r.Backends["late"].Listed || r.Backends["late"].Tools != 1 {
				t.Errorf("readyz after the swap: %+v", r)
			}
		})
	}
}

// TestLateBackendCollision: a backend that appears after start with a tool
// name another backend already has renames the tools involved (both get
// their backend's prefix), and no other tool.
func TestLateBackendCollision(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()

	first := &fakeAPI{}
	first.set(t, apiFile("svc.v1", "S", method("A"), method("Only")))
	firstAddr, _ := serveFake(t, first, "127.0.0.1:0")
	g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "a", firstAddr), dialBackend(t, "b", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: -1}})
	if got := toolNames(g); !slices.Equal(got, []string{"S_A", "S_Only"}) {
		t.Fatalf("tools before the late backend: %v", got)
	}
	late := &fakeAPI{}
	late.set(t, apiFile("svc.v1", "S", method("A")))
	serveFake(t, late, addr)
	want := []string{"S_Only", "a_S_A", "b_S_A"}
	testkit.WaitFor(t, "the colliding tools renamed", func() bool {
		got := toolNames(g)
		slices.Sort(got)
		return slices.Equal(got, want)
	})
}

// TestDescriptorFilesWithoutReflection: a backend with NoReflection is
// never asked over reflection, and its descriptor set is read again on
// each refresh, so a method added to the file appears without a restart.
func TestDescriptorFilesWithoutReflection(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	api.set(t, apiFile("doc.v1", "Docs", method("Read")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	path := filepath.Join(t.TempDir(), "doc.binpb")
	write := func(f *descriptorpb.FileDescriptorProto) {
		raw, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
			protodesc.ToFileDescriptorProto(descriptorpb.File_google_protobuf_descriptor_proto),
			protodesc.ToFileDescriptorProto(mcpgatewayv1.File_mcpgateway_v1_annotations_proto), f,
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Renamed into place, so a refresh never reads half a file.
		if err := os.WriteFile(path+".new", raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	write(apiFile("doc.v1", "Docs", method("Read")))
	b := dialBackend(t, "docs", addr)
	b.Files, b.NoReflection = descriptors.NewDescriptorSetSource(path), true
	g, _ := newGateway(t, []gateway.Backend{b}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 20 * time.Millisecond}})
	if got := toolNames(g); !slices.Equal(got, []string{"Docs_Read"}) {
		t.Fatalf("tools %v", got)
	}
	write(apiFile("doc.v1", "Docs", method("Read"), method("Write")))
	testkit.WaitFor(t, "the method added to the file", func() bool { return slices.Contains(toolNames(g), "Docs_Write") })
	if n := api.lists.Load(); n != 0 {
		t.Errorf("the backend was asked over reflection %d times", n)
	}
}

func TestReadyzDuringShutdown(t *testing.T) {
	t.Parallel()
	_, g, url := startGateway(t, nil)
	base := strings.TrimSuffix(url, "/mcp")
	if code, r := readyz(t, base); code != 200 || !r.Ready || !r.Backends["zoo"].Discovered {
		t.Fatalf("readyz: %d %+v", code, r)
	}
	g.BeginShutdown()
	if code, r := readyz(t, base); code != 503 || !r.ShuttingDown {
		t.Errorf("readyz while shutting down: %d %+v", code, r)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestSingleBackendDownAtStart: alone and down, the backend does not stop
// the gateway: zero tools, 503, and a clear error in /readyz.
func TestSingleBackendDownAtStart(t *testing.T) {
	t.Parallel()
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "", "127.0.0.1:1")}, &gateway.Options{Catalog: gateway.CatalogOptions{DiscoveryTimeout: time.Second}})
	if n := len(g.Tools().Tools()); n != 0 {
		t.Errorf("%d tools", n)
	}
	code, r := readyz(t, base)
	st := r.Backends["127.0.0.1:1"]
	if code != 503 || st.Discovered || !strings.Contains(st.Error, "unreachable") {
		t.Errorf("readyz %d %+v", code, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "", "127.0.0.1:1")}, &gateway.Options{Catalog: gateway.CatalogOptions{RequireBackends: true}}); err == nil || !strings.Contains(err.Error(), "backend 127.0.0.1:1 is unreachable") {
		t.Errorf("RequireBackends: %v", err)
	}
}

// TestResources: every exposed service is a resource whose content is its
// .proto source, reduced to the exposed methods and the types they use;
// a refresh that changes the services sends resources/list_changed.
func TestResources(t *testing.T) {
	t.Parallel()
	zoo := startBackend(t)
	api := &fakeAPI{}
	api.set(t, apiFile("svc.v1", "S", method("A")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zoo.addr), dialBackend(t, "s", addr)},
		&gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond, Exclude: []string{"zoo.v1.ZooService/Delete*"}}})

	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			var lc listChanges
			cs := connectNotified(t, base+"/mcp", v, lc.options())
			ctx := context.Background()
			list, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range list.Resources {
				uris = append(uris, r.URI)
				if r.MIMEType != "text/x-protobuf" || r.Description == "" {
					t.Errorf("%s: %+v", r.URI, r)
				}
			}
			if want := []string{"grpc://s/svc.v1.S", "grpc://zoo/zoo.v1.ZooService"}; !slices.Equal(uris, want) {
				t.Fatalf("resources %v, want %v (health hidden)", uris, want)
			}
			read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "grpc://zoo/zoo.v1.ZooService"})
			if err != nil {
				t.Fatal(err)
			}
			src := read.Contents[0].Text
			for _, want := range []string{"package zoo.v1;", "service ZooService {", "rpc GetAnimal ( GetAnimalRequest ) returns ( GetAnimalResponse )", "message Animal {", "enum Species {", `title: "Look up an animal"`} {
				if !strings.Contains(src, want) {
					t.Errorf("source lacks %q:\n%s", want, src)
				}
			}
			if strings.Contains(src, "DeleteAnimal") || strings.Contains(src, "message DeleteAnimalRequest") {
				t.Errorf("source shows an excluded method:\n%s", src)
			}
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "grpc://zoo/nope"}); err == nil {
				t.Error("reading an unknown resource succeeded")
			}
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(templates.ResourceTemplates) != 0 {
				t.Errorf("templates: %v %+v", err, templates)
			}

			waitNotified(t, g)
			api.set(t, apiFile("svc.v1", "S", method("A")), apiFile("svc.v2", "T", method("B")))
			testkit.WaitFor(t, "resources/list_changed", func() bool { _, n := lc.counts(); return n > 0 })
			list, err = cs.ListResources(ctx, nil)
			if err != nil || len(list.Resources) != 3 {
				t.Errorf("after the change: %v %+v", err, list)
			}
			api.set(t, apiFile("svc.v1", "S", method("A")))
			testkit.WaitFor(t, "resources back to two", func() bool {
				l, err := cs.ListResources(ctx, nil)
				return err == nil && len(l.Resources) == 2
			})
		})
	}
}

// TestResourceComments: with a descriptor set, the printed source carries
// the comments.
func TestResourceComments(t *testing.T) {
	t.Parallel()
	f := apiFile("doc.v1", "Docs", method("Read"))
	f.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
		{Path: []int32{6, 0}, Span: []int32{1, 0, 10}, LeadingComments: proto.String(" Docs keeps documents.\n")},
		{Path: []int32{6, 0, 2, 0}, Span: []int32{2, 0, 10}, LeadingComments: proto.String(" Reads a document.\n")},
		{Path: []int32{4, 0}, Span: []int32{3, 0, 10}, LeadingComments: proto.String(" A message.\n")},
	}}
	_, base := docsWithComments(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rr, err := connect(t, base+"/mcp", "2025-11-25").ReadResource(ctx, &sdk.ReadResourceParams{URI: "grpc://docs/doc.v1.Docs"})
	if err != nil {
		t.Fatal(err)
	}
	src := rr.Contents[0].Text
	for _, want := range []string{"// Docs keeps documents.", "// Reads a document.", "// A message.", "message Msg {"} {
		if !strings.Contains(src, want) {
			t.Errorf("source lacks %q:\n%s", want, src)
		}
	}
}

func showHints(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "none"
	}
	b, _ := json.Marshal(a)
	return string(b)
}

// docsWithComments serves doc.v1.Docs by reflection, without comments,
// and returns a gateway in front of it that takes its comments from f, a
// copy of the file with source info, given as a descriptor set, and the
// gateway's base URL.
func docsWithComments(t *testing.T, f *descriptorpb.FileDescriptorProto) (*gateway.Gateway, string) {
	t.Helper()
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(descriptorpb.File_google_protobuf_descriptor_proto),
		protodesc.ToFileDescriptorProto(mcpgatewayv1.File_mcpgateway_v1_annotations_proto), f,
	}}
	raw, _ := proto.Marshal(set)
	path := filepath.Join(t.TempDir(), "doc.binpb")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{}
	api.set(t, apiFile("doc.v1", "Docs", method("Read")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	b := dialBackend(t, "docs", addr)
	b.Files = descriptors.NewDescriptorSetSource(path)
	return newGateway(t, []gateway.Backend{b}, nil)
}

// TestCommentDescriptionDedented: a method's comment becomes its tool's
// description without what protoc leaves of "//": the space that starts
// each line goes, indentation beyond it (a code sample) stays.
func TestCommentDescriptionDedented(t *testing.T) {
	t.Parallel()
	f := apiFile("doc.v1", "Docs", method("Read"))
	f.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
		{Path: []int32{6, 0, 2, 0}, Span: []int32{2, 0, 10}, LeadingComments: proto.String(" Read reads a document.\n\n It returns the latest revision:\n   read(name)\n")},
	}}
	g, _ := docsWithComments(t, f)
	const want = "Read reads a document.\n\nIt returns the latest revision:\n  read(name)"
	tools := g.Tools().Tools()
	if len(tools) != 1 || tools[0].Description != want {
		t.Errorf("tools %+v, want one described %q", tools, want)
	}
}
