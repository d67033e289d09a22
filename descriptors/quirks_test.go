package descriptors_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// fakeReflection is a grpc.reflection.v1 server answering with hand-made
// FileDescriptorProtos, the way servers that are not grpc-go do: only the
// file asked for (no imports sent along), and whatever the files say, right
// or wrong.
type fakeReflection struct {
	refv1.UnimplementedServerReflectionServer
	files    []*descriptorpb.FileDescriptorProto
	services []string

	mu    sync.Mutex
	asked []string // requests, for tests that check what was fetched
}

func (f *fakeReflection) ServerReflectionInfo(stream refv1.ServerReflection_ServerReflectionInfoServer) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp := &refv1.ServerReflectionResponse{ValidHost: req.GetHost(), OriginalRequest: req}
		var file *descriptorpb.FileDescriptorProto
		switch r := req.GetMessageRequest().(type) {
		case *refv1.ServerReflectionRequest_ListServices:
			list := &refv1.ListServiceResponse{}
			for _, s := range f.services {
				list.Service = append(list.Service, &refv1.ServiceResponse{Name: s})
			}
			resp.MessageResponse = &refv1.ServerReflectionResponse_ListServicesResponse{ListServicesResponse: list}
		case *refv1.ServerReflectionRequest_FileContainingSymbol:
			f.record("symbol " + r.FileContainingSymbol)
			file = f.declaring(r.FileContainingSymbol)
		case *refv1.ServerReflectionRequest_FileByFilename:
			f.record("file " + r.FileByFilename)
			for _, fd := range f.currentFiles() {
				if fd.GetName() == r.FileByFilename {
					file = fd
				}
			}
		}
		if resp.MessageResponse == nil {
			if file == nil {
				resp.MessageResponse = &refv1.ServerReflectionResponse_ErrorResponse{
					ErrorResponse: &refv1.ErrorResponse{ErrorCode: int32(codes.NotFound), ErrorMessage: "not found"},
				}
			} else {
				b, err := proto.Marshal(file)
				if err != nil {
					return err
				}
				resp.MessageResponse = &refv1.ServerReflectionResponse_FileDescriptorResponse{
					FileDescriptorResponse: &refv1.FileDescriptorResponse{FileDescriptorProto: [][]byte{b}},
				}
			}
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// currentFiles lets a test change files between discoveries.
func (f *fakeReflection) currentFiles() []*descriptorpb.FileDescriptorProto {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.files
}

func (f *fakeReflection) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, s)
}

// declaring finds the file declaring a top-level or nested type, a
// service or a method.
func (f *fakeReflection) declaring(symbol string) *descriptorpb.FileDescriptorProto {
	for _, fd := range f.currentFiles() {
		pkg := fd.GetPackage()
		prefix := ""
		if pkg != "" {
			prefix = pkg + "."
		}
		rest, ok := strings.CutPrefix(symbol, prefix)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rest, ".")
		for _, m := range fd.GetMessageType() {
			if m.GetName() == top {
				return fd
			}
		}
		for _, e := range fd.GetEnumType() {
			if e.GetName() == top {
				return fd
			}
		}
		for _, s := range fd.GetService() {
			if s.GetName() == top {
				return fd
			}
		}
	}
	return nil
}

func fileProto(t *testing.T, text string) *descriptorpb.FileDescriptorProto {
	t.Helper()
	fd := new(descriptorpb.FileDescriptorProto)
	if err := prototext.Unmarshal([]byte(text), fd); err != nil {
		t.Fatal(err)
	}
	return fd
}

// discoverFake serves files through a fakeReflection and discovers them,
// returning the result, the error and the debug log.
func discoverFake(t *testing.T, f *fakeReflection) (*descriptors.Result, error, string) {
	t.Helper()
	addr := startServer(t, func(s *grpc.Server) { refv1.RegisterServerReflectionServer(s, f) })
	var log testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	res, err := discover(t, addr, &descriptors.ServerReflectionOptions{Logger: logger})
	return res, err, log.String()
}

func field(t *testing.T, res *descriptors.Result, name protoreflect.FullName) protoreflect.FieldDescriptor {
	t.Helper()
	msg, f, _ := strings.Cut(string(name), "#")
	return mustMessage(t, res, protoreflect.FullName(msg)).Fields().ByName(protoreflect.Name(f))
}

// The service file of most cases: shop.v1.Shop with one method whose
// messages live in the same file.
const shopService = `
	service { name: "Shop" method { name: "Buy" input_type: ".shop.v1.BuyRequest" output_type: ".shop.v1.BuyResponse" } }
	message_type { name: "BuyResponse" }`

// TestRepair serves, for each quirk of a server that is not grpc-go, the
// files that show it, and checks that discovery repairs it as protoc
// would have read the files, and logs the repair at debug level.
func TestRepair(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files []string // served, in the text format
		log   string   // in the debug log ("" for nothing to look for)
		check func(t *testing.T, res *descriptors.Result, f *fakeReflection)
	}{
		{
			name: "qualifies unambiguous names",
			files: []string{`
		name: "shop.proto" package: "shop.v1" syntax: "proto3"
		service { name: "Shop" method { name: "Buy" input_type: "BuyRequest" output_type: "shop.v1.BuyResponse" } }
		message_type { name: "BuyRequest"
			field { name: "item" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "Item" }
			field { name: "size" number: 2 label: LABEL_OPTIONAL type_name: "Product.Size" }
			nested_type { name: "Item" field { name: "sku" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING } }
		}
		message_type { name: "Product" enum_type { name: "Size" value { name: "SIZE_UNSPECIFIED" number: 0 } } }
		message_type { name: "BuyResponse" }`},
			log: `repair="qualified a relative type name"`,
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				for name, want := range map[protoreflect.FullName]protoreflect.FullName{
					"shop.v1.BuyRequest#item": "shop.v1.BuyRequest.Item",
					"shop.v1.BuyRequest#size": "shop.v1.Product.Size",
				} {
					fd := field(t, res, name)
					var got protoreflect.FullName
					if fd.Message() != nil {
						got = fd.Message().FullName()
					} else if fd.Enum() != nil {
						got = fd.Enum().FullName()
					}
					if got != want {
						t.Errorf("%s: type %s, want %s", name, got, want)
					}
				}
				if k := field(t, res, "shop.v1.BuyRequest#size").Kind(); k != protoreflect.EnumKind {
					t.Errorf("size: kind %v, want enum (the missing type is set from the declaration)", k)
				}
				if got := res.Services[0].Methods().Get(0).Input().FullName(); got != "shop.v1.BuyRequest" {
					t.Errorf("Buy input %s", got)
				}
			},
		},
		{
			// "Item" inside BuyRequest means BuyRequest.Item, which shadows
			// shop.v1.Item, exactly as protoc would read it.
			name: "follows protobuf scoping",
			files: []string{`
		name: "shop.proto" package: "shop.v1" syntax: "proto3"` + shopService + `
		message_type { name: "BuyRequest"
			field { name: "item" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "Item" }
			field { name: "other" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "shop.v1.Item" }
			nested_type { name: "Item" }
		}
		message_type { name: "Item" }`},
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				if got := field(t, res, "shop.v1.BuyRequest#item").Message().FullName(); got != "shop.v1.BuyRequest.Item" {
					t.Errorf("item: %s, want shop.v1.BuyRequest.Item", got)
				}
				if got := field(t, res, "shop.v1.BuyRequest#other").Message().FullName(); got != "shop.v1.Item" {
					t.Errorf("other: %s, want shop.v1.Item", got)
				}
			},
		},
		{
			// As grpc-js serves them: every google.protobuf type in one
			// "google_protobuf.proto" with camelCase field names, our extension
			// copied into MethodOptions as a field, and no imports anywhere.
			name: "regrouped shared files",
			files: []string{`name: "shop_v1.proto" package: "shop.v1" syntax: "proto3" dependency: "google_protobuf.proto"` + shopService + `
			message_type { name: "BuyRequest" field { name: "at" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "google.protobuf.Timestamp" } }`,
				`name: "google_protobuf.proto" package: "google.protobuf"
			message_type { name: "Timestamp"
				field { name: "seconds" number: 1 label: LABEL_OPTIONAL type: TYPE_INT64 }
				field { name: "nanos" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 } }
			message_type { name: "MethodOptions"
				field { name: "idempotencyLevel" number: 34 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: "IdempotencyLevel" }
				field { name: ".mcpgateway.v1.tool" number: 51870 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "mcpgateway.v1.Tool" }
				enum_type { name: "IdempotencyLevel" value { name: "IDEMPOTENCY_UNKNOWN" number: 0 } }
				extension_range { start: 1000 end: 536870911 } }`},
			log: "replaced a served file of shared types by the bundled files",
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				want, _ := protoregistry.GlobalFiles.FindFileByPath("google/protobuf/timestamp.proto")
				if got := field(t, res, "shop.v1.BuyRequest#at").Message().ParentFile(); got != want {
					t.Errorf("Timestamp from %s, want the bundled file", got.Path())
				}
				if _, err := res.Files.FindFileByPath("google_protobuf.proto"); err == nil {
					t.Error("the regrouped file is still in Files")
				}
			},
		},
		{
			name: "removes copied extension fields",
			files: []string{`
		name: "shop.proto" package: "shop.v1" syntax: "proto2"` + shopService + `
		message_type { name: "BuyRequest"
			field { name: "id" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
			field { name: ".shop.v1.note" number: 100 label: LABEL_OPTIONAL type: TYPE_STRING }
			extension_range { start: 100 end: 200 } }
		extension { name: "note" number: 100 label: LABEL_OPTIONAL type: TYPE_STRING extendee: "BuyRequest" }`},
			log: "removed an extension copied into its extendee",
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				if n := mustMessage(t, res, "shop.v1.BuyRequest").Fields().Len(); n != 1 {
					t.Errorf("BuyRequest has %d fields, want 1", n)
				}
				x, err := res.Files.FindDescriptorByName("shop.v1.note")
				if err != nil || x.(protoreflect.ExtensionDescriptor).ContainingMessage().FullName() != "shop.v1.BuyRequest" {
					t.Errorf("extension shop.v1.note: %v %v", x, err)
				}
			},
		},
		{
			// shop.proto uses money.proto's type but declares no imports, and the
			// server sends only the file asked for: the client has to ask for the
			// symbol to find money.proto at all.
			name: "missing imports",
			files: []string{`name: "shop.proto" package: "shop.v1" syntax: "proto3"` + shopService + `
			message_type { name: "BuyRequest" field { name: "price" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".money.v1.Money" } }`,
				`name: "money.proto" package: "money.v1" syntax: "proto3"
			message_type { name: "Money" field { name: "units" number: 1 label: LABEL_OPTIONAL type: TYPE_INT64 } }`},
			log: `repair="added a missing import" import=money.proto`,
			check: func(t *testing.T, res *descriptors.Result, f *fakeReflection) {
				if got := field(t, res, "shop.v1.BuyRequest#price").Message(); got.FullName() != "money.v1.Money" || got.ParentFile().Path() != "money.proto" {
					t.Errorf("price: %v", got)
				}
				shop, _ := res.Files.FindFileByPath("shop.proto")
				if shop.Imports().Len() != 1 || shop.Imports().Get(0).Path() != "money.proto" {
					t.Errorf("shop.proto imports %v, want money.proto", shop.Imports())
				}
				if !strings.Contains(strings.Join(f.asked, ","), "symbol money.v1.Money") {
					t.Errorf("client never asked for money.v1.Money: %v", f.asked)
				}
			},
		},
		{
			// protobufjs names the entry of stock_by_sku "Stock_by_sku" (grpc-js
			// sends that); protoc and protodesc want StockBySkuEntry.
			name: "map entry names",
			files: []string{`
		name: "shop.proto" package: "shop.v1" syntax: "proto3"` + shopService + `
		message_type { name: "BuyRequest"
			field { name: "stock_by_sku" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: "Stock_by_sku" }
			nested_type { name: "Stock_by_sku" options { map_entry: true }
				field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
				field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
			}
		}`},
			log: `repair="renamed map entry message" to=StockBySkuEntry`,
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				fd := field(t, res, "shop.v1.BuyRequest#stock_by_sku")
				if !fd.IsMap() || fd.Message().Name() != "StockBySkuEntry" || fd.MapKey().Kind() != protoreflect.StringKind || fd.MapValue().Kind() != protoreflect.Int32Kind {
					t.Errorf("stock_by_sku: want map<string, int32> with entry StockBySkuEntry, got %v", fd)
				}
			},
		},
		{
			// The file imports google/rpc/status.proto (never served) and uses
			// google.api.HttpBody and google.protobuf.Timestamp without importing
			// anything for them: all three come from the bundle.
			name: "bundles unserved shared types",
			files: []string{`
		name: "shop.proto" package: "shop.v1" syntax: "proto3"
		dependency: "google/rpc/status.proto"` + shopService + `
		message_type { name: "BuyRequest"
			field { name: "status" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".google.rpc.Status" }
			field { name: "body" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "google.api.HttpBody" }
			field { name: "at" number: 3 label: LABEL_OPTIONAL type_name: ".google.protobuf.Timestamp" }
		}`},
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				for name, path := range map[protoreflect.FullName]string{
					"shop.v1.BuyRequest#status": "google/rpc/status.proto",
					"shop.v1.BuyRequest#body":   "google/api/httpbody.proto",
					"shop.v1.BuyRequest#at":     "google/protobuf/timestamp.proto",
				} {
					m := field(t, res, name).Message()
					want, err := protoregistry.GlobalFiles.FindFileByPath(path)
					if err != nil {
						t.Fatal(err)
					}
					if m.ParentFile() != want {
						t.Errorf("%s: from %s, want the bundled %s", name, m.ParentFile().Path(), path)
					}
				}
				// google.rpc.Status holds an Any: its import came along.
				if _, err := res.Files.FindFileByPath("google/protobuf/any.proto"); err != nil {
					t.Errorf("the bundled file's own imports are missing: %v", err)
				}
			},
		},
		{
			// A custom options file nobody serves: only options come from it.
			name: "drops unused unserved import",
			files: []string{`
		name: "shop.proto" package: "shop.v1" syntax: "proto3"
		dependency: "acme/options.proto"` + shopService + `
		message_type { name: "BuyRequest" }`},
			log: "import=acme/options.proto",
			check: func(t *testing.T, res *descriptors.Result, _ *fakeReflection) {
				if diff := cmp.Diff([]string{"shop.v1.Shop"}, serviceNames(res)); diff != "" {
					t.Error(diff)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeReflection{services: []string{"shop.v1.Shop"}}
			for _, text := range tc.files {
				f.files = append(f.files, fileProto(t, text))
			}
			res, err, log := discoverFake(t, f)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, res, f)
			if !strings.Contains(log, tc.log) {
				t.Errorf("repair not logged (want %q):\n%s", tc.log, log)
			}
		})
	}
}

func TestRepairNamesWhatCannotBeRepaired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		file  string
		wants []string
	}{
		// The field says enum, but the innermost "Item" is a message: protoc
		// would reject this, and taking the outer enum would be a guess.
		{"ambiguous name", `
			name: "shop.proto" package: "shop.v1" syntax: "proto3"` + shopService + `
			message_type { name: "BuyRequest"
				field { name: "item" number: 1 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: "Item" }
				nested_type { name: "Item" } }
			enum_type { name: "Item" value { name: "ITEM_UNSPECIFIED" number: 0 } }`,
			[]string{"service shop.v1.Shop", "file shop.proto", "shop.v1.BuyRequest.item", `"Item" is ambiguous`, "shop.v1.BuyRequest.Item, shop.v1.Item"}},
		{"type nobody declares", `
			name: "shop.proto" package: "shop.v1" syntax: "proto3"` + shopService + `
			message_type { name: "BuyRequest" field { name: "coupon" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".promo.v1.Coupon" } }`,
			[]string{"service shop.v1.Shop", "file shop.proto", "shop.v1.BuyRequest.coupon", `"promo.v1.Coupon" not found`}},
		{"import nobody serves, still used", `
			name: "shop.proto" package: "shop.v1" syntax: "proto3" dependency: "promo.proto"` + shopService + `
			message_type { name: "BuyRequest" field { name: "coupon" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".promo.v1.Coupon" } }`,
			[]string{"service shop.v1.Shop", "file shop.proto", "imports promo.proto"}},
		{"map entry whose proper name is taken", `
			name: "shop.proto" package: "shop.v1" syntax: "proto3"` + shopService + `
			message_type { name: "BuyRequest"
				field { name: "tags" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".shop.v1.BuyRequest.Tags" }
				nested_type { name: "Tags" options { map_entry: true }
					field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
					field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING } }
				nested_type { name: "TagsEntry" } }`,
			[]string{"service shop.v1.Shop", "file shop.proto", "shop.v1.BuyRequest.Tags", "should be named TagsEntry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeReflection{services: []string{"shop.v1.Shop"}, files: []*descriptorpb.FileDescriptorProto{fileProto(t, tc.file)}}
			_, err, _ := discoverFake(t, f)
			if err == nil {
				t.Fatal("Discover succeeded")
			}
			t.Logf("error: %v", err)
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			var de *descriptors.DescriptorError
			if !errors.As(err, &de) {
				t.Errorf("no DescriptorError in %v", err)
			}
		})
	}
}

// TestOptionsThroughReflection serves our options in the two forms a
// reflection client may meet: as the bytes a server sends (decoded here
// with the extension known) and as unknown fields (a server file whose
// options this binary decoded before knowing the extension).
func TestOptionsThroughReflection(t *testing.T) {
	t.Parallel()
	file := fileProto(t, `
		name: "shop.proto" package: "shop.v1" syntax: "proto3" dependency: "mcpgateway/v1/annotations.proto"`+shopService+`
		message_type { name: "BuyRequest" }`)
	mopts := &descriptorpb.MethodOptions{}
	proto.SetExtension(mopts, mcpgatewayv1.E_Tool, &mcpgatewayv1.Tool{Name: "buy", ReadOnlyHint: proto.Bool(false), DestructiveHint: proto.Bool(true)})
	sopts := &descriptorpb.ServiceOptions{}
	proto.SetExtension(sopts, mcpgatewayv1.E_Service, &mcpgatewayv1.Service{NamePrefix: "shop_", Hidden: true})
	// As unknown fields: the raw bytes, with no extension type attached.
	b, _ := proto.Marshal(sopts)
	unknown := &descriptorpb.ServiceOptions{}
	if err := (proto.UnmarshalOptions{Resolver: new(protoregistry.Types)}).Unmarshal(b, unknown); err != nil {
		t.Fatal(err)
	}
	file.Service[0].Method[0].Options = mopts
	file.Service[0].Options = unknown

	res, err, _ := discoverFake(t, &fakeReflection{services: []string{"shop.v1.Shop"}, files: []*descriptorpb.FileDescriptorProto{file}})
	if err != nil {
		t.Fatal(err)
	}
	sd := res.Services[0]
	tool := descriptors.ToolOptions(sd.Methods().Get(0))
	if tool.GetName() != "buy" || tool.ReadOnlyHint == nil || tool.GetReadOnlyHint() || !tool.GetDestructiveHint() || tool.IdempotentHint != nil {
		t.Errorf("ToolOptions = %v", tool)
	}
	svc := descriptors.ServiceOptions(sd)
	if svc.GetNamePrefix() != "shop_" || !svc.GetHidden() {
		t.Errorf("ServiceOptions = %v", svc)
	}
	// Unknown-field options stay unknown in the descriptor itself.
	if descriptors.ServiceOptions(sd) == nil {
		t.Error("options lost")
	}
}

func TestOptionsUnset(t *testing.T) {
	t.Parallel()
	res, err, _ := discoverFake(t, &fakeReflection{services: []string{"shop.v1.Shop"}, files: []*descriptorpb.FileDescriptorProto{
		fileProto(t, `name: "shop.proto" package: "shop.v1" syntax: "proto3"`+shopService+` message_type { name: "BuyRequest" }`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := descriptors.ToolOptions(res.Services[0].Methods().Get(0)); got != nil {
		t.Errorf("ToolOptions = %v, want nil", got)
	}
	if got := descriptors.ServiceOptions(res.Services[0]); got != nil {
		t.Errorf("ServiceOptions = %v, want nil", got)
	}
}

// TestDiscoverAsksOncePerFile: services declared by a file already received
// are not asked for again (grpc-go's server would resend the whole file
// each time, 1 MB for each of Compute Engine's 129 services).
func TestDiscoverAsksOncePerFile(t *testing.T) {
	f := &fakeReflection{
		files: []*descriptorpb.FileDescriptorProto{fileProto(t, `
			name: "many.proto" package: "many.v1" syntax: "proto3"
			message_type { name: "M" }
			service { name: "A" method { name: "Do" input_type: ".many.v1.M" output_type: ".many.v1.M" } }
			service { name: "B" method { name: "Do" input_type: ".many.v1.M" output_type: ".many.v1.M" } }
			service { name: "C" method { name: "Do" input_type: ".many.v1.M" output_type: ".many.v1.M" } }`)},
		services: []string{"many.v1.A", "many.v1.B", "many.v1.C"},
	}
	res, err, _ := discoverFake(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := serviceNames(res); !slices.Equal(got, []string{"many.v1.A", "many.v1.B", "many.v1.C"}) {
		t.Errorf("services %v", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.asked, []string{"symbol many.v1.A"}) {
		t.Errorf("asked %q, want only the first service's file", f.asked)
	}
}

// TestDiscoverUnchanged: a source asked again returns the very same Result
// while the backend answers the same bytes, and a new one, with another
// fingerprint, once a file changes.
func TestDiscoverUnchanged(t *testing.T) {
	f := &fakeReflection{
		files: []*descriptorpb.FileDescriptorProto{fileProto(t, `
			name: "a.proto" package: "a.v1" syntax: "proto3"
			message_type { name: "M" }
			service { name: "S" method { name: "Do" input_type: ".a.v1.M" output_type: ".a.v1.M" } }`)},
		services: []string{"a.v1.S"},
	}
	addr := startServer(t, func(s *grpc.Server) { refv1.RegisterServerReflectionServer(s, f) })
	src := descriptors.NewServerReflection(zootest.Dial(t, addr), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	first, err := src.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Fingerprint == [32]byte{} {
		t.Fatal("no fingerprint")
	}
	again, err := src.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("an unchanged backend gave a new Result")
	}
	f.mu.Lock()
	f.files = []*descriptorpb.FileDescriptorProto{fileProto(t, `
		name: "a.proto" package: "a.v1" syntax: "proto3"
		message_type { name: "M" field { name: "x" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "x" } }
		service { name: "S" method { name: "Do" input_type: ".a.v1.M" output_type: ".a.v1.M" } }`)}
	f.mu.Unlock()
	changed, err := src.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if changed == first || changed.Fingerprint == first.Fingerprint {
		t.Fatal("a changed file went unnoticed")
	}
	if changed.Services[0].Methods().Get(0).Input().Fields().ByName("x") == nil {
		t.Error("the new Result does not carry the new field")
	}
}
