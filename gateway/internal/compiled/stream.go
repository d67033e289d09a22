package compiled

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// Kind is the shape of a tool's RPC, which decides its call path.
type Kind uint8

const (
	KindUnary Kind = iota
	KindServerStream
	KindClientStream
	KindBidiStream
)

// compileStream makes t a streaming tool when m streams: the kind, and a
// sentence in the description telling a model how the stream maps onto
// arguments and result (the streaming sides' array-shaped schemas are
// buildSchemas'). A unary method is left as it is.
func (t *Tool) compileStream(m protoreflect.MethodDescriptor) {
	var note string
	switch cs, ss := m.IsStreamingClient(), m.IsStreamingServer(); {
	case cs && ss:
		t.Call.Kind = KindBidiStream
		note = fmt.Sprintf("Bidirectional streaming: pass the request messages in order as %q; the gateway sends them while it collects the replies, and returns every reply in order in %q (the gateway's message and byte limits may truncate them).",
			schema.StreamRequestsProperty, schema.StreamMessagesProperty)
	case cs:
		t.Call.Kind = KindClientStream
		note = fmt.Sprintf("Client streaming: pass the request messages in order as %q; the gateway sends them, closes the stream and returns the single response.",
			schema.StreamRequestsProperty)
	case ss:
		t.Call.Kind = KindServerStream
		note = fmt.Sprintf("Server streaming: the result collects the stream's messages in order in %q (the gateway's message and byte limits may truncate them); with a progressToken each message is reported as it arrives.",
			schema.StreamMessagesProperty)
	default:
		return
	}
	if ss := m.IsStreamingServer(); ss {
		t.Call.ProgressLabel = " (" + string(m.Output().FullName()) + ")"
	}
	t.Definition.Description += "\n\n" + note
}
