package compiled

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// MaxToolBytes is the most bytes one tool's tools/list entry takes (name,
// title, description, inputSchema, outputSchema, annotations, execution
// and _meta, as a 2025-11-25 client receives it), in either tool mode:
// search_tools shows a part of the same entry. A client puts every listed
// tool into its model's context, and a search answer carries a schema
// only when it fits in MaxSearchAnswerBytes; a Google Cloud request
// written out in full can reach megabytes.
const MaxToolBytes = 48 << 10

// maxToolName is the longest a tool's name may become after its tool is
// compiled (a collision with another backend's tool prefixes the
// backend's name): the size check counts a name this long, so renaming
// never takes a tool over MaxToolBytes.
const maxToolName = 64

// boundTool holds t's entry to MaxToolBytes, once, at discovery. A tool
// within it is left as it is, byte for byte. A larger one has its
// schemas bounded (schema.InputWithin, "Bounded schemas"), input first:
// the input schema is what a model needs to call the tool, so it gets
// what the entry has left after its other members and a reserve for the
// output schema (the smaller of the output schema and a quarter of what
// is left); the output schema gets the rest, bounded by depth with its
// root's fields all listed, and is left out when even that does not fit
// (outputSchema is optional at every revision, and a result still
// carries structuredContent). What a bounded schema leaves out is named
// by a resource that serves the message's definition (messageURI).
//
// It returns the entry's size before, 0 when the tool was within the
// bound.
func boundTool(t *Tool, m protoreflect.MethodDescriptor, cc *compileCache, dec schemaDecor) (int, error) {
	def := t.Definition
	def.Name = strings.Repeat("x", maxToolName)
	if t.LRO != nil {
		// The catalog adds how to poll the operation once it knows the
		// poller's name (refresh.go): counted at its longest.
		lr := *t.LRO
		lr.GetTool = def.Name
		def.Description += lr.Describe()
	}
	buf := entryBuffers.Get().(*[]byte)
	*buf = mcp.AppendEntry((*buf)[:0], def)
	size := len(*buf)
	entryBuffers.Put(buf)
	if size <= MaxToolBytes {
		return 0, nil
	}
	in, out := len(def.InputSchema), len(def.OutputSchema)
	avail := MaxToolBytes - (size - in - out)
	// Shares are rounded down to whole KiB, so the tools of one message
	// (an API's Create and Update of a resource, its operations) share one
	// bounded schema in the compile cache instead of one per description.
	// An input schema gets at least shareUnit, even when a description
	// alone takes the entry over (none does on the googleapis catalog).
	if inMax := max(shareUnit, (avail-min(out, avail/4))&^(shareUnit-1)); in > inMax {
		s, err := rebound(inMax, func(budget int) (json.RawMessage, error) {
			return cc.inputWithin(m.Input(), m.IsStreamingClient(), budget)
		}, dec.input)
		if err != nil {
			return 0, err
		}
		t.Definition.InputSchema = s
	}
	if outMax := (avail - len(t.Definition.InputSchema)) &^ (shareUnit - 1); out > outMax {
		s, err := rebound(outMax, func(budget int) (json.RawMessage, error) { return cc.boundOutput(t, m, budget) }, dec.output)
		if err != nil {
			return 0, err
		}
		t.Definition.OutputSchema = s
	}
	return size, nil
}

// rebound rebuilds a schema within limit bytes (build), with what
// decorate changes in it: rebuilt from the message, a schema has lost the
// operator's argument rules and a watch's window. What decorate adds is
// taken from the share once it is known (one rebuild more, for a watch).
func rebound(limit int, build func(budget int) (json.RawMessage, error), decorate func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	budget := limit
	for {
		raw, err := build(budget)
		if err != nil {
			return nil, err
		}
		s, err := decorate(raw)
		if err != nil {
			return nil, err
		}
		// Rounded as the shares are, so that tools of one message still
		// share one rebuilt schema in the compile cache.
		smaller := (limit - (len(s) - len(raw))) &^ (shareUnit - 1)
		if len(s) <= limit || budget != limit || smaller < shareUnit || smaller >= budget {
			return s, nil
		}
		budget = smaller
	}
}

// entryBuffers are the buffers boundTool measures entries in, one per
// goroutine compiling tools: an entry written out in full can take
// megabytes, and 13,000 tools' worth of them would be garbage.
var entryBuffers = sync.Pool{New: func() any { return new([]byte) }}

// shareUnit is what the schemas' shares of a bounded tool are rounded to.
const shareUnit = 1024

// boundedTools sums up, for the log, the tools of one discovery that
// boundTool shortened.
type boundedTools struct {
	n, largest  int
	largestTool string
	// took is the time spent shortening them.
	took time.Duration
}

func (b *boundedTools) add(name string, whole int, took time.Duration) {
	if whole == 0 {
		return
	}
	b.n++
	b.took += took
	if whole > b.largest {
		b.largest, b.largestTool = whole, name
	}
}

// boundOutput is t's output schema within max bytes, nil when it cannot
// be: the schema compiled for t rebuilt from its message with the same
// additions (an operation's handle, the result budget's list of cuts).
func (c *compileCache) boundOutput(t *Tool, m protoreflect.MethodDescriptor, max int) (json.RawMessage, error) {
	if t.Call.Kind == KindServerStream || t.Call.Kind == KindBidiStream {
		s, err := c.outputWithin(m.Output(), true, max)
		if err != nil || len(s) > max {
			return nil, err
		}
		return s, nil
	}
	md := m.Output()
	if t.LRO != nil {
		md = t.LRO.ResponseDesc
	}
	raw, err := c.output(md)
	if err != nil {
		return nil, err
	}
	// What the additions take, taken from the compiled schema.
	added := len(t.Definition.OutputSchema) - len(raw)
	s, err := c.outputWithin(md, false, max-added)
	if err != nil || len(s) > max-added {
		return nil, err
	}
	if t.LRO != nil {
		var key string
		if s, key, err = c.withHandle(s); err != nil || key != t.LRO.HandleKey {
			return nil, err
		}
	}
	if t.Budget.Shape.Member != "" {
		out, shape, err := c.withTruncated(s)
		if err != nil || shape.Member != t.Budget.Shape.Member {
			return nil, err
		}
		s = out
	}
	if len(s) > max {
		return nil, nil
	}
	return s, nil
}

// messageURI is the resource that serves md's definition as .proto
// source, which bounded schemas name for what they leave out. It has the
// form of a service's resource, grpc://BACKEND/full.Name; full names are
// unique within a backend's descriptors.
func messageURI(backend string, md protoreflect.MessageDescriptor) string {
	return "grpc://" + backend + "/" + string(md.FullName())
}

// boundKey identifies a bounded schema in the compile cache.
type boundKey struct {
	name   protoreflect.FullName
	stream bool
	max    int
}

func (c *compileCache) bound(max int) schema.Bound {
	return schema.Bound{MaxBytes: max, Resource: c.resource}
}

// resource is the Resource of c's bounds: it records every message a
// bounded schema may name, which resources/read then serves.
func (c *compileCache) resource(md protoreflect.MessageDescriptor) string {
	c.escaped.add(md)
	return messageURI(c.backend, md)
}

func (c *compileCache) inputWithin(md protoreflect.MessageDescriptor, stream bool, max int) (json.RawMessage, error) {
	return c.boundIn.get(boundKey{md.FullName(), stream, max}, func() (json.RawMessage, error) {
		b := c.bound(max)
		build := schema.StreamInputWithin
		if !stream {
			whole, err := c.input(md)
			if err != nil {
				return nil, err
			}
			build, b.WholeBytes = schema.InputWithin, len(whole)
		}
		return build(md, c.sopts, b)
	})
}

func (c *compileCache) outputWithin(md protoreflect.MessageDescriptor, stream bool, max int) (json.RawMessage, error) {
	return c.boundOut.get(boundKey{md.FullName(), stream, max}, func() (json.RawMessage, error) {
		if stream {
			return schema.StreamOutputWithin(md, c.sopts, c.bound(max))
		}
		whole, err := c.output(md)
		if err != nil {
			return nil, err
		}
		b := c.bound(max)
		b.WholeRoot, b.WholeBytes = true, len(whole)
		return schema.OutputWithin(md, c.sopts, b)
	})
}
