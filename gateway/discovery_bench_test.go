package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// bigAPI is a file of 1,000 methods over 10 services, each method with its
// own request and response messages (a few fields, one nested message), as
// a large real estate has.
func bigAPI() *descriptorpb.FileDescriptorProto {
	f := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("big/v1/big.proto"),
		Package: proto.String("big.v1"),
		Syntax:  proto.String("proto3"),
	}
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	i64 := descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
	msgT := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	field := func(name string, n int32, typ *descriptorpb.FieldDescriptorProto_Type, label *descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(n), Type: typ, Label: label}
		if typeName != "" {
			fd.TypeName = proto.String(typeName)
		}
		return fd
	}
	f.MessageType = append(f.MessageType, &descriptorpb.DescriptorProto{
		Name:  proto.String("Item"),
		Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, str, opt, ""), field("count", 2, i64, opt, "")},
	})
	for s := range 10 {
		svc := &descriptorpb.ServiceDescriptorProto{Name: proto.String(fmt.Sprintf("Service%02d", s))}
		for m := range 100 {
			name := fmt.Sprintf("S%02dMethod%03d", s, m)
			f.MessageType = append(f.MessageType,
				&descriptorpb.DescriptorProto{Name: proto.String(name + "Request"), Field: []*descriptorpb.FieldDescriptorProto{
					field("id", 1, str, opt, ""), field("limit", 2, i64, opt, ""), field("filter", 3, str, rep, ""),
				}},
				&descriptorpb.DescriptorProto{Name: proto.String(name + "Response"), Field: []*descriptorpb.FieldDescriptorProto{
					field("items", 1, msgT, rep, ".big.v1.Item"), field("next_page_token", 2, str, opt, ""),
				}},
			)
			svc.Method = append(svc.Method, &descriptorpb.MethodDescriptorProto{
				Name:       proto.String(fmt.Sprintf("Method%03d", m)),
				InputType:  proto.String(".big.v1." + name + "Request"),
				OutputType: proto.String(".big.v1." + name + "Response"),
			})
		}
		f.Service = append(f.Service, svc)
	}
	return f
}

// BenchmarkDiscovery1000 measures a cold discovery of a backend with 1,000
// methods over real server reflection on loopback: the reflection round
// trips, assembly, and compiling every tool (schemas, validators,
// encoders), then the tool list pages. It is what start-up costs, and what
// a refresh costs when the backend's API changed (an unchanged one repeats
// the discovery's reflection requests and compares a hash of the answers).
func BenchmarkDiscovery1000(b *testing.B) {
	api := &fakeAPI{}
	api.set(b, bigAPI())
	addr, _ := serveFake(b, api, "127.0.0.1:0")
	bk := dialBackend(b, "big", addr)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		// Typed: auto would list a catalog this size in search mode.
		g, err := gateway.New(ctx, []gateway.Backend{bk}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: -1, RequireBackends: true}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(g.Tools().Tools()); n != 1000 {
			b.Fatalf("%d tools", n)
		}
		g.Close()
	}
}

// BenchmarkToolsList1000 measures listing all 1,000 tools over Streamable
// HTTP (2026-07-28, stateless), following nextCursor: 10 pages of 100.
func BenchmarkToolsList1000(b *testing.B) {
	api := &fakeAPI{}
	api.set(b, bigAPI())
	addr, _ := serveFake(b, api, "127.0.0.1:0")
	// Typed: auto would list a catalog this size in search mode.
	_, base := newGateway(b, []gateway.Backend{dialBackend(b, "big", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: -1}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	client := &testkit.Client{URL: base + "/mcp", Header: testkit.MethodHeaders("tools/list", ""), Version: "2026-07-28",
		HTTP: &http.Client{Timeout: 10 * time.Second}}
	list := func(cursor string) (string, int) {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		if cursor != "" {
			params += `,"cursor":"` + cursor + `"`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}}`
		req, err := client.NewRequest(b.Context(), []byte(body))
		if err != nil {
			b.Fatal(err)
		}
		resp, err := client.HTTP.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out struct {
			Result struct {
				Tools      []json.RawMessage
				NextCursor string
			}
		}
		if err := json.Unmarshal(raw, &out); err != nil || len(out.Result.Tools) == 0 {
			b.Fatalf("%s: %v", raw, err)
		}
		return out.Result.NextCursor, len(out.Result.Tools)
	}
	b.ReportAllocs()
	for b.Loop() {
		total, cursor := 0, ""
		for {
			next, n := list(cursor)
			total += n
			if next == "" {
				break
			}
			cursor = next
		}
		if total != 1000 {
			b.Fatalf("listed %d tools", total)
		}
	}
}
