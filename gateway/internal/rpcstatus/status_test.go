package rpcstatus

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// TestStatusText: a backend's non-OK status reads as README.md's Errors
// table says: the code name and the message, one line per google.rpc
// detail (a backend's own detail type as JSON), the code's advice, and
// for UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED and DEADLINE_EXCEEDED
// only, that the call is retryable, with RetryInfo's delay.
func TestStatusText(t *testing.T) {
	// A detail type only the backend's descriptors know.
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(`name: "own.proto" package: "own.v1" syntax: "proto3"
		message_type { name: "Oops" field { name: "why" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "why" } }`), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	files := &protoregistry.Files{}
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	oops := dynamicpb.NewMessage(fd.Messages().Get(0))
	oops.Set(fd.Messages().Get(0).Fields().Get(0), protoreflect.ValueOfString("the bucket is full"))
	own, err := anypb.New(oops)
	if err != nil {
		t.Fatal(err)
	}

	st, err := status.New(codes.Unavailable, "try later").WithDetails(
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "name", Description: "too short"}}},
		&errdetails.ErrorInfo{Reason: "FULL", Domain: "zoo.example.com"},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(3 * time.Second)},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "project:p", Description: "daily limit"}}},
		&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{{Type: "TOS", Subject: "p", Description: "not accepted"}}},
		&errdetails.ResourceInfo{ResourceType: "animal", ResourceName: "leo"},
		&errdetails.Help{Links: []*errdetails.Help_Link{{Description: "docs", Url: "https://zoo.example.com/help"}}},
		&errdetails.LocalizedMessage{Locale: "fr-FR", Message: "réessayez"},
	)
	if err != nil {
		t.Fatal(err)
	}
	sp := st.Proto()
	sp.Details = append(sp.Details, own)
	res := Result(context.Background(), status.FromProto(sp), anytypes.New(&descriptors.Result{Files: files}))
	want := `UNAVAILABLE: try later
- BadRequest: field "name": too short
- ErrorInfo: reason=FULL domain=zoo.example.com
- RetryInfo: retry after 3s
- QuotaFailure: project:p: daily limit
- PreconditionFailure: [TOS] p: not accepted
- ResourceInfo: animal "leo"
- Help: docs <https://zoo.example.com/help>
- LocalizedMessage (fr-FR): réessayez
- OWN
The backend is unavailable right now. This error is retryable: retry after 3s.`
	// protojson varies its spacing, so the JSON line is compared decoded.
	got := res.Content[0].Text
	lines := strings.Split(got, "\n")
	var ownLine map[string]any
	for i, l := range lines {
		if js, ok := strings.CutPrefix(l, "- {"); ok && json.Unmarshal([]byte("{"+js), &ownLine) == nil {
			lines[i] = "- OWN"
		}
	}
	if !res.IsError || len(res.Content) != 1 || strings.Join(lines, "\n") != want {
		t.Errorf("isError=%v\n%s\nwant\n%s", res.IsError, got, want)
	}
	if ownLine["@type"] != "type.googleapis.com/own.v1.Oops" || ownLine["why"] != "the bucket is full" {
		t.Errorf("the backend's own detail: %v", ownLine)
	}

	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		text := Result(context.Background(), status.New(c, "m"), nil).Content[0].Text
		retryable := c == codes.Unavailable || c == codes.ResourceExhausted || c == codes.Aborted || c == codes.DeadlineExceeded
		if !strings.HasPrefix(text, telemetry.CodeName(c)+": m\n") || strings.Contains(text, "retryable") != retryable {
			t.Errorf("%s: %q (retryable: %v)", c, text, retryable)
		}
	}
	// A code past the 17 defined ones is named as sent (metrics fold it
	// into UNKNOWN, the model sees what the backend said).
	if text := Result(context.Background(), status.New(codes.Code(42), "m"), nil).Content[0].Text; text != "CODE_42: m" {
		t.Errorf("code 42: %q", text)
	}
}
