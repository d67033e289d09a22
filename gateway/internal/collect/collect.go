// Package collect gathers the messages of a server or bidirectional
// stream into a tool result's JSON ({"messages":[...]}), as they arrive,
// within the gateway's stream limits: a message count, the JSON bytes
// collected and, for a watch, the room left in the result budget. A limit
// is not an error: the collection stops and the result carries a
// "truncated" entry for "messages" giving the reason (the same list a
// result over the result budget gets). The memory of a call is the
// collected JSON, so nothing per message survives the next receive.
//
// It knows nothing of tools or of gRPC: the gateway's stream path
// (gateway/stream.go) receives each message in wire form and hands it
// to Add with the tool's transcoder, reports progress with Progress, and
// makes the result of Finish's JSON. A watch's window
// (gateway/internal/watch) adds its account to the result.
package collect

import (
	"context"
	"fmt"
	"strconv"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// Collector accumulates the JSON of a stream's messages directly in the
// result's encoding ({"messages":[...]), so the memory of a call is the
// collected JSON and nothing per message survives the next receive.
type Collector struct {
	maxMessages int
	maxBytes    int64
	// budget, for a watch, is the result budget less the room its
	// window's account takes; 0 for none.
	budget int64

	buf    []byte
	n      int   // messages collected
	size   int64 // their JSON bytes
	reason string
	added  bool // the last add kept its message
	// win is a watch's window, and ended how it ended.
	win   *watch.Window
	ended string
}

// New is a collector within the stream limits.
func New(maxMessages int, maxBytes int64) *Collector {
	c := &Collector{maxMessages: maxMessages, maxBytes: maxBytes}
	c.buf = append(make([]byte, 0, 512), `{"`+schema.StreamMessagesProperty+`":[`...)
	return c
}

// Watch makes the collection a watch's: win's account ends the result,
// and a resultBudget above 0 ends the window at that budget rather than
// have the answer cut afterwards, so the resume value is the last
// message the model is shown and resuming skips none.
func (c *Collector) Watch(win *watch.Window, resultBudget int) {
	if win != nil && resultBudget > 0 {
		c.budget = int64(resultBudget - min(watch.ResultReserve, resultBudget/4))
	}
	c.win = win
}

// N is the count of messages collected.
func (c *Collector) N() int { return c.n }

// Added says whether the last Add kept its message.
func (c *Collector) Added() bool { return c.added }

// Reason is why a limit stopped the collection, "" while none has.
func (c *Collector) Reason() string { return c.reason }

// Progress is the progress notification's text for the last message
// collected; label names the message type (" (pkg.Msg)").
func (c *Collector) Progress(label string) string {
	return "message " + strconv.Itoa(c.n) + label
}

// Add transcodes one message (wire form) with appendJSON into the result
// and reports whether collection may go on. A limit is hit by the
// message that would exceed it, which is dropped: so "truncated" always
// means the stream had more than the result holds, and a stream of
// exactly the limit completes normally. The error is a message that does
// not transcode.
func (c *Collector) Add(ctx context.Context, wire []byte, appendJSON func(ctx context.Context, b, wire []byte) ([]byte, error)) (bool, error) {
	c.added = false
	if c.n >= c.maxMessages {
		c.reason = fmt.Sprintf("message limit: the stream had more than %d messages, the gateway's message limit; the gateway kept the first %d and cancelled it",
			c.maxMessages, c.n)
		return false, nil
	}
	// The JSON is appended in place and taken back if it crosses the byte
	// limit, so a message is never held twice.
	start := len(c.buf)
	b := c.buf
	if c.n > 0 {
		b = append(b, ',')
	}
	from := len(b)
	b, err := appendJSON(ctx, b, wire)
	if err != nil {
		c.buf = c.buf[:start]
		return false, err
	}
	size := int64(len(b) - from)
	if c.budget > 0 && c.size+size > c.budget {
		c.buf = b[:start]
		c.reason = fmt.Sprintf("result budget: the next message would take the result past the gateway's result budget; the gateway kept the first %d message(s) and ended the window, so that the resume value is the last message shown",
			c.n)
		return false, nil
	}
	if c.size+size > c.maxBytes {
		c.buf = b[:start]
		c.reason = fmt.Sprintf("byte limit: the next message would take the collected JSON past %d bytes, the gateway's stream byte limit; the gateway kept the first %d message(s) and cancelled the stream",
			c.maxBytes, c.n)
		return false, nil
	}
	c.buf = b
	c.added = true
	c.n++
	c.size += size
	return true, nil
}

// End records how a watch's window ended (watch.EndedTime and the
// others), for Finish to write; nothing when the stream is not a
// watch's.
func (c *Collector) End(ended string) {
	if c.win != nil {
		c.ended = ended
	}
}

// Finish closes the JSON object, adding the truncated entry, errText
// when set and a watch's window. The collector is done afterwards.
func (c *Collector) Finish(errText string) []byte {
	b := append(c.buf, ']')
	if c.reason != "" {
		b = append(b, `,"`+schema.StreamTruncatedProperty+`":[`...)
		b = results.Record{Path: schema.StreamMessagesProperty, Kept: c.n, Total: -1, Reason: c.reason}.AppendJSON(b)
		b = append(b, ']')
	}
	if errText != "" {
		b = append(b, `,"`+schema.StreamErrorProperty+`":`...)
		b = jsonstr.Append(b, errText)
	}
	if c.ended != "" {
		b = append(b, `,"`+watch.Property+`":`...)
		b = c.win.AppendJSON(b, c.ended, c.n)
	}
	c.buf = nil
	return append(b, '}')
}
