package collect

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
)

// TestCollector pins the collector's encoding and limits on message types
// the demo has no stream of: a message that is not a JSON object arrives
// wrapped as {"value": ...}, exactly as a unary response would.
func TestCollector(t *testing.T) {
	enc, err := transcode.Compile((&timestamppb.Timestamp{}).ProtoReflect().Descriptor(), &transcode.Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	// As a tool whose response is not an object transcodes it: wrapped,
	// with no Any types of its own.
	appendJSON := func(ctx context.Context, b, wire []byte) ([]byte, error) {
		return (*anytypes.Types)(nil).AppendWrapped(ctx, b, enc, wire, true)
	}
	wire := func(sec int64) []byte {
		b, err := proto.Marshal(&timestamppb.Timestamp{Seconds: sec})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	elem := len(`{"value":"1970-01-01T00:00:01Z"}`)

	cases := []struct {
		name      string
		maxMsgs   int
		maxBytes  int64
		send      int
		want      string
		truncated string
	}{
		{"all", 10, 1 << 20, 2, `{"messages":[{"value":"1970-01-01T00:00:01Z"},{"value":"1970-01-01T00:00:02Z"}]}`, ""},
		{"exactly the message limit", 2, 1 << 20, 2, `{"messages":[{"value":"1970-01-01T00:00:01Z"},{"value":"1970-01-01T00:00:02Z"}]}`, ""},
		{"exactly the byte limit", 10, int64(2 * elem), 2, `{"messages":[{"value":"1970-01-01T00:00:01Z"},{"value":"1970-01-01T00:00:02Z"}]}`, ""},
		{"message limit", 1, 1 << 20, 3, `{"messages":[{"value":"1970-01-01T00:00:01Z"}],"truncated":[{"path":"messages","kept":1,"reason":"message limit`, "message limit"},
		{"byte limit", 10, int64(2*elem - 1), 3, `{"messages":[{"value":"1970-01-01T00:00:01Z"}],"truncated":[{"path":"messages","kept":1,"reason":"byte limit`, "byte limit"},
		{"nothing fits", 10, 5, 1, `{"messages":[],"truncated":[{"path":"messages","kept":0,"reason":"byte limit`, "byte limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := New(c.maxMsgs, c.maxBytes)
			for i := range c.send {
				more, err := col.Add(t.Context(), wire(int64(i+1)), appendJSON)
				if err != nil {
					t.Fatal(err)
				}
				if !more {
					break
				}
			}
			got := string(col.Finish(""))
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got  %s\nwant %s...", got, c.want)
			}
			var r struct {
				Truncated []struct {
					Reason string `json:"reason"`
				} `json:"truncated"`
			}
			if err := json.Unmarshal([]byte(got), &r); err != nil {
				t.Fatalf("not JSON: %v: %s", err, got)
			}
			if (len(r.Truncated) == 1) != (c.truncated != "") || c.truncated != "" && !strings.HasPrefix(r.Truncated[0].Reason, c.truncated) {
				t.Errorf("truncated %+v, want reason %q", r.Truncated, c.truncated)
			}
		})
	}

	// A message that does not transcode is an error, and leaves the
	// collected JSON as it was.
	col := New(10, 1<<20)
	if _, err := col.Add(t.Context(), wire(1), appendJSON); err != nil {
		t.Fatal(err)
	}
	truncated := []byte{0x08} // field 1, varint, and no varint
	if _, err := col.Add(t.Context(), truncated, appendJSON); err == nil {
		t.Error("want an error for wire data that is not a Timestamp")
	}
	if got := string(col.Finish(`X: y`)); got != `{"messages":[{"value":"1970-01-01T00:00:01Z"}],"error":"X: y"}` {
		t.Errorf("after a failed add: %s", got)
	}
}
