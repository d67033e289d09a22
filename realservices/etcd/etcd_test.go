package etcd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/embed"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/realservices/internal/realtest"
)

var update = flag.Bool("update", false, "rewrite testdata/etcd.binpb from the etcd API module's registered files")

// descriptorSet is the file docs/etcd.md's command gives the gateway.
const descriptorSet = "testdata/etcd.binpb"

// startEtcd starts a one-member etcd server on loopback ports of its
// own, in a temporary directory, and returns its client address.
func startEtcd(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	any0, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*any0}, []url.URL{*any0}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*any0}, []url.URL{*any0}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// etcd logs its listeners' closing as errors: kept in a file, shown
	// when the test fails.
	logs := filepath.Join(t.TempDir(), "etcd.log")
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logs}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logs)
			t.Logf("etcd's log:\n%s", b)
		}
	})
	// A fixture: nothing here needs to survive a crash, and fsync is
	// most of a small server's write latency.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("etcd failed: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("etcd was not ready within 30s")
	}
	return e.Clients[0].Addr().String()
}

// front starts a gateway in front of etcd at addr, with etcd's API from
// the descriptor set, in typed or search mode, and connects the official
// MCP Go SDK's client; progress notifications go to onProgress.
func front(t *testing.T, addr string, mode gateway.ToolMode, onProgress func(*sdk.ProgressNotificationParams)) *sdk.ClientSession {
	t.Helper()
	url := realtest.Serve(t, gateway.Backend{Name: "etcd", Address: addr,
		Files: descriptors.NewDescriptorSetSource(descriptorSet), NoReflection: true},
		&gateway.Options{Search: gateway.SearchOptions{ToolMode: mode}})
	return realtest.Connect(t, url, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if onProgress != nil {
				onProgress(req.Params)
			}
		}})
}

// agent calls tools as a model would: by name, or through call_tool in
// search mode.
type agent struct {
	t      *testing.T
	cs     *sdk.ClientSession
	search bool
}

// call calls tool and returns its structured result, failing the test on
// an error result.
func (a *agent) call(tool string, args map[string]any, progress string) map[string]any {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := &sdk.CallToolParams{Name: tool, Arguments: args}
	if a.search {
		p = &sdk.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": tool, "arguments": args}}
	}
	if progress != "" {
		p.SetProgressToken(progress)
	}
	res, err := a.cs.CallTool(ctx, p)
	if err != nil {
		a.t.Fatalf("%s: %v", tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		a.t.Fatalf("%s %v: %s", tool, args, text.String())
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok && json.Unmarshal([]byte(text.String()), &sc) != nil {
		a.t.Fatalf("%s: no structured result: %s", tool, text.String())
	}
	return sc
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func unb64(t *testing.T, v any) string {
	t.Helper()
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("%v is not base64: %v", v, err)
	}
	return string(b)
}

// revision reads a response's header.revision (an int64: a JSON string).
func revision(t *testing.T, sc map[string]any) int64 {
	t.Helper()
	h, _ := sc["header"].(map[string]any)
	n, err := strconv.ParseInt(fmt.Sprint(h["revision"]), 10, 64)
	if err != nil {
		t.Fatalf("no header.revision in %v", sc)
	}
	return n
}

// TestEtcdWorkflow drives an agent's workflow on a real etcd server
// through the gateway and the official MCP Go SDK client, typed and in
// search mode: put, get, a range by prefix, a compare-and-swap
// transaction, a lease with a TTL, delete, and a watch that reports a
// change made while it waits, then returns successfully at the end of its
// window with the revision to continue from.
func TestEtcdWorkflow(t *testing.T) {
	addr := startEtcd(t)
	for _, mode := range []struct {
		name string
		mode gateway.ToolMode
	}{{"typed", gateway.ToolModeTyped}, {"search", gateway.ToolModeSearch}} {
		t.Run(mode.name, func(t *testing.T) {
			var mu sync.Mutex
			progressed := map[string]int{}
			seen := make(chan string, 16)
			cs := front(t, addr, mode.mode, func(p *sdk.ProgressNotificationParams) {
				mu.Lock()
				defer mu.Unlock()
				tok := fmt.Sprint(p.ProgressToken)
				progressed[tok]++
				select {
				case seen <- tok:
				default:
				}
			})
			a := &agent{t: t, cs: cs, search: mode.mode == gateway.ToolModeSearch}
			p := "/" + mode.name + "/"

			// Put and get.
			put := a.call("KV_Put", map[string]any{"key": b64(p + "a"), "value": b64("1")}, "")
			first := revision(t, put)
			got := a.call("KV_Range", map[string]any{"key": b64(p + "a")}, "")
			kvs, _ := got["kvs"].([]any)
			if len(kvs) != 1 || unb64(t, kvs[0].(map[string]any)["value"]) != "1" {
				t.Fatalf("get %sa: %v", p, got)
			}

			// A range by prefix: [p, p with its last byte + 1).
			a.call("KV_Put", map[string]any{"key": b64(p + "b"), "value": b64("2")}, "")
			end := p[:len(p)-1] + string(p[len(p)-1]+1)
			got = a.call("KV_Range", map[string]any{"key": b64(p), "rangeEnd": b64(end)}, "")
			kvs, _ = got["kvs"].([]any)
			var keys []string
			for _, kv := range kvs {
				keys = append(keys, unb64(t, kv.(map[string]any)["key"]))
			}
			if !slices.Equal(keys, []string{p + "a", p + "b"}) || fmt.Sprint(got["count"]) != "2" {
				t.Errorf("range %s*: keys %v, count %v", p, keys, got["count"])
			}

			// Compare-and-swap: a's value 1 becomes 3; the same swap again
			// finds 3 and takes the failure branch, reading a.
			cas := map[string]any{
				"compare": []any{map[string]any{"key": b64(p + "a"), "target": "VALUE", "result": "EQUAL", "value": b64("1")}},
				"success": []any{map[string]any{"requestPut": map[string]any{"key": b64(p + "a"), "value": b64("3")}}},
				"failure": []any{map[string]any{"requestRange": map[string]any{"key": b64(p + "a")}}},
			}
			if got := a.call("KV_Txn", cas, ""); got["succeeded"] != true {
				t.Errorf("the first compare-and-swap failed: %v", got)
			}
			got = a.call("KV_Txn", cas, "")
			resps, _ := got["responses"].([]any)
			if got["succeeded"] == true || len(resps) != 1 || !strings.Contains(fmt.Sprint(resps[0]), b64("3")) {
				t.Errorf("the second compare-and-swap: %v", got)
			}

			// A lease with a TTL, and a key that lives on it.
			lease := a.call("Lease_LeaseGrant", map[string]any{"TTL": 60}, "")
			id := fmt.Sprint(lease["ID"])
			if lease["TTL"] == nil || id == "" || id == "<nil>" {
				t.Fatalf("lease grant: %v", lease)
			}
			a.call("KV_Put", map[string]any{"key": b64(p + "leased"), "value": b64("x"), "lease": id}, "")
			ttl := a.call("Lease_LeaseTimeToLive", map[string]any{"ID": id, "keys": true}, "")
			if n, _ := strconv.Atoi(fmt.Sprint(ttl["TTL"])); n <= 0 || n > 60 || !strings.Contains(fmt.Sprint(ttl["keys"]), b64(p+"leased")) {
				t.Errorf("lease time to live: %v", ttl)
			}

			// Delete.
			if got := a.call("KV_DeleteRange", map[string]any{"key": b64(p + "b")}, ""); fmt.Sprint(got["deleted"]) != "1" {
				t.Errorf("delete: %v", got)
			}

			// Watch the prefix for a window; once the watch is created (its
			// first message, seen as progress), change a key while it waits.
			type watched struct{ sc map[string]any }
			done := make(chan watched, 1)
			tok := "watch-" + mode.name
			start := time.Now()
			go func() {
				var sc map[string]any
				// Sent on the way out of a failed call too (its Fatalf
				// ends this goroutine), so the test goroutine never waits
				// for nothing.
				defer func() { done <- watched{sc} }()
				sc = a.call("Watch_Watch", map[string]any{
					"requests":       []any{map[string]any{"createRequest": map[string]any{"key": b64(p), "rangeEnd": b64(end)}}},
					"window-seconds": 4,
				}, tok)
			}()
			for got := ""; got != tok; {
				select {
				case got = <-seen:
				case <-time.After(20 * time.Second):
					t.Fatal("the watch sent no message")
				}
			}
			changed := revision(t, a.call("KV_Put", map[string]any{"key": b64(p + "a"), "value": b64("4")}, ""))
			var w map[string]any
			select {
			case d := <-done:
				w = d.sc
			case <-time.After(60 * time.Second):
				t.Fatal("the watch did not return within a minute")
			}
			if w == nil {
				t.FailNow() // the call failed, and said why
			}
			if took := time.Since(start); took < 4*time.Second || took > 20*time.Second {
				t.Errorf("the watch returned after %v, want its 4s window", took)
			}
			msgs, _ := w["messages"].([]any)
			var events []any
			for _, m := range msgs {
				if evs, ok := m.(map[string]any)["events"].([]any); ok {
					events = append(events, evs...)
				}
			}
			if len(events) != 1 || !strings.Contains(fmt.Sprint(events[0]), b64(p+"a")) || !strings.Contains(fmt.Sprint(events[0]), b64("4")) {
				t.Errorf("the watch saw %v, want the put of %sa=4", events, p)
			}
			win, _ := w["window"].(map[string]any)
			resume, _ := win["resume"].(map[string]any)
			if win["ended"] != "time" || resume["field"] != "header.revision" || resume["value"] != strconv.FormatInt(changed, 10) ||
				!strings.Contains(fmt.Sprint(win["note"]), "call again from header.revision "+strconv.FormatInt(changed, 10)) {
				t.Errorf("window %v, want it ended by time, resuming from revision %d", win, changed)
			}
			mu.Lock()
			if progressed[tok] != len(msgs) {
				t.Errorf("%d progress notifications for %d messages", progressed[tok], len(msgs))
			}
			mu.Unlock()
			if changed <= first {
				t.Errorf("revisions did not grow: %d then %d", first, changed)
			}
		})
	}
}

// TestEtcdDocs checks the command docs/etcd.md gives against what
// TestEtcdWorkflow runs: the same descriptor set, without reflection.
func TestEtcdDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/etcd.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "go run ./cmd/gateway --backend localhost:2379 --descriptor-set realservices/etcd/" + descriptorSet + " --no-reflection"
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/etcd.md does not give the command %q", want)
	}
}

// TestEtcdDescriptorSet: testdata/etcd.binpb is the descriptor set of the
// etcd API module's registered files (rpc.proto and what it imports);
// -update rewrites it.
func TestEtcdDescriptorSet(t *testing.T) {
	// etcd's Go files are registered under their base names (rpc.proto,
	// kv.proto) while their imports name the paths in etcd's tree
	// (etcd/api/mvccpb/kv.proto): such an import is a placeholder, the
	// registered file whose path ends the import's, which the set holds
	// under the import's name.
	byPath := func(path string) protoreflect.FileDescriptor {
		var found protoreflect.FileDescriptor
		protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			if fd.Path() == path || strings.HasSuffix(path, "/"+fd.Path()) {
				found = fd
				return false
			}
			return true
		})
		return found
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor, name string)
	add = func(fd protoreflect.FileDescriptor, name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		if fd.IsPlaceholder() {
			if fd = byPath(name); fd == nil {
				t.Fatalf("%s: imported, and no registered file has that path", name)
			}
		}
		imports := fd.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor, imports.Get(i).Path())
		}
		fp := protodesc.ToFileDescriptorProto(fd)
		fp.Name = proto.String(name)
		set.File = append(set.File, fp)
	}
	add(etcdserverpb.File_rpc_proto, etcdserverpb.File_rpc_proto.Path())
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(descriptorSet, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(descriptorSet)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b) {
		t.Errorf("%s is not the etcd API module's descriptor set: run go test -run TestEtcdDescriptorSet -update", descriptorSet)
	}
}
