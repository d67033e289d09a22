package transcode_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
)

// TestAllowPartial: a message missing a required field fails by default,
// as protojson does, and renders as protojson's AllowPartial renders it
// when the option is set.
func TestAllowPartial(t *testing.T) {
	md := schema().p2
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("unpacked"), protoreflect.ValueOfList(func() protoreflect.List {
		l := m.NewField(md.Fields().ByName("unpacked")).List()
		l.Append(protoreflect.ValueOfInt32(3))
		return l
	}()))
	wire, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := transcode.Compile(md, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.AppendJSON(nil, wire); err == nil || !strings.Contains(err.Error(), "req") {
		t.Errorf("strict: want a missing-required error naming req, got %v", err)
	}
	partial, err := transcode.Compile(md, &transcode.Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := partial.AppendJSON(nil, wire)
	if err != nil {
		t.Fatal(err)
	}
	want, err := protojson.MarshalOptions{AllowPartial: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, want); err != nil {
		t.Fatal(err)
	}
	if string(got) != buf.String() {
		t.Errorf("partial:\n got %s\nwant %s", got, buf.String())
	}
}
