package call

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/collect"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// Streaming RPCs as tools.
//
// A tool call is one request and one result, so the gateway turns a stream
// into JSON arrays: the request messages of a client or bidirectional stream
// arrive as the "requests" argument and are sent in order, and the messages
// of a server or bidirectional stream are collected into the result's
// "messages", in order (the property names are in package schema). While
// it collects, each message is reported as notifications/progress when the
// caller sent a progressToken, so a client sees the stream live.
//
// Every streaming call is bounded: by a deadline (Options.Calls.StreamTimeout or
// the tool's own timeout), by a message count (StreamMaxMessages) and by the
// JSON bytes collected (StreamMaxBytes), so the memory of a call never
// depends on how long the backend keeps streaming. A count or byte limit is
// not an error: the gateway cancels the stream and returns what it has,
// with a "truncated" entry for "messages" that gives the reason (the same
// list a result over the result budget gets, the gateway's budget.go). A deadline or a non-OK status is an
// error result that still carries the messages received before it.

// streamDescs are the grpc.StreamDesc of each streaming kind. grpc reads
// only the two direction flags; the method name travels separately.
var streamDescs = [...]grpc.StreamDesc{
	compiled.KindServerStream: {ServerStreams: true},
	compiled.KindClientStream: {ClientStreams: true},
	compiled.KindBidiStream:   {ServerStreams: true, ClientStreams: true},
}

// ServerStream calls a server-streaming method. Every request
// message of a streaming call is converted before the stream opens, so
// arguments that do not fit are an input error and the backend sees
// nothing.
func (e *Env) ServerStream(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	in, warnings, err := request(t, args)
	if err != nil {
		return e.InputError(ctx, t, err)
	}
	res, err := e.stream(ctx, req, t, []any{in}, nil)
	return NoteArguments(res, warnings), err
}

// RequestStream calls a client- or bidirectional-streaming method
// with the request messages the arguments list.
func (e *Env) RequestStream(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	reqs, warnings, err := decodeRequests(t, args)
	if err != nil {
		return e.InputError(ctx, t, err)
	}
	res, err := e.stream(ctx, req, t, reqs, nil)
	return NoteArguments(res, warnings), err
}

// Watch calls an open-ended stream for the window the arguments
// ask for (gateway/internal/watch).
func (e *Env) Watch(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	args, win, err := t.Watch.Take(args, e.StreamMaxMessages)
	if err != nil {
		return e.InputError(ctx, t, err)
	}
	var reqs []any
	var warnings schema.Warnings
	if t.Call.Kind == compiled.KindServerStream {
		in, w, err := request(t, args)
		if err != nil {
			return e.InputError(ctx, t, err)
		}
		reqs, warnings = []any{in}, w
	} else if reqs, warnings, err = decodeRequests(t, args); err != nil {
		return e.InputError(ctx, t, err)
	}
	res, err := e.stream(ctx, req, t, reqs, win)
	return NoteArguments(res, warnings), err
}

// stream opens the stream of a streaming tool and runs it to its end with
// the converted requests, or to the end of its window for a watch (win,
// nil otherwise; gateway/internal/watch).
func (e *Env) stream(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, reqs []any, win *watch.Window) (*mcp.CallToolResult, error) {
	tctx, cancelTimeout := context.WithTimeout(ctx, t.Call.Timeout)
	defer cancelTimeout()
	if win != nil {
		var cancelWindow context.CancelFunc
		tctx, cancelWindow = win.Open(tctx)
		defer cancelWindow()
	}
	// The cause tells a stream the gateway cut short (a limit, a failed
	// send) from one the backend or the deadline ended.
	sctx, cancel := context.WithCancelCause(tctx)
	defer cancel(nil)
	if t.Call.Retry && t.Obs.Metrics != nil {
		var tries *backendconn.Attempts
		sctx, tries = backendconn.CountAttempts(sctx)
		defer func() { t.Obs.Metrics.Retried(tries.Retries()) }()
	}
	stream, err := t.Call.Conn.NewStream(sctx, &streamDescs[t.Call.Kind], t.Call.Method, callwire.Codec)
	if err != nil {
		return e.streamEnded(ctx, sctx, t, nil, err), nil
	}

	switch t.Call.Kind {
	case compiled.KindClientStream:
		return e.clientStream(ctx, sctx, req, t, stream, reqs)
	case compiled.KindServerStream:
		if err := stream.SendMsg(reqs[0]); err != nil && !errors.Is(err, io.EOF) {
			// A local failure (a request over the send limit) leaves the
			// stream open; io.EOF means the backend ended it, and its
			// status comes from RecvMsg below.
			cancel(&sendError{err})
			return e.streamEnded(ctx, sctx, t, nil, err), nil
		}
		if err := stream.CloseSend(); err != nil {
			return e.streamEnded(ctx, sctx, t, nil, err), nil
		}
		return e.collect(ctx, sctx, cancel, req, t, stream, win)
	}

	// Bidirectional: the sender runs beside the receive loop, so a backend
	// that answers before it has read all the input, and blocks on flow
	// control until its answers are read, cannot deadlock the call.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		if err := sendAll(stream, reqs); err != nil {
			// The stream stays open after a local send failure; cancelling
			// it with the failure as the cause ends the receive loop and
			// makes that failure the call's outcome.
			cancel(&sendError{err})
		}
	}()
	res, err := e.collect(ctx, sctx, cancel, req, t, stream, win)
	// The receive loop has seen the end of the stream or cut it short;
	// cancelling unblocks a sender still waiting on flow control, and
	// waiting for it leaves no goroutine behind.
	cancel(nil)
	<-sent
	return res, err
}

// sendError is the cancellation cause when sending a request failed in the
// gateway (a message over the send limit), not because the backend ended
// the stream: the send's status is then the call's outcome, not the
// CANCELLED the cancellation produces.
type sendError struct{ err error }

func (e *sendError) Error() string { return "sending a request message: " + e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// sendAll sends the request messages in order and half-closes. io.EOF from
// SendMsg means the stream already ended (the backend finished early or
// the call was cancelled): that is not a send failure, the stream's status
// is read by the receiving side.
func sendAll(stream grpc.ClientStream, reqs []any) error {
	for _, m := range reqs {
		if err := stream.SendMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return stream.CloseSend()
}

// clientStream sends the requests in order, half-closes and answers with
// the single response, wrapped as the unary path wraps it.
func (e *Env) clientStream(ctx, sctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, stream grpc.ClientStream, reqs []any) (*mcp.CallToolResult, error) {
	sent := 0
	for _, m := range reqs {
		if err := stream.SendMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				break // the backend ended the stream; RecvMsg has its status
			}
			return e.clientStreamEnded(ctx, sctx, t, err, sent, len(reqs)), nil
		}
		sent++
		if req.ProgressToken != nil {
			_ = req.NotifyProgress(ctx, float64(sent), float64(len(reqs)),
				"sent request "+strconv.Itoa(sent)+" of "+strconv.Itoa(len(reqs)))
		}
	}
	if err := stream.CloseSend(); err != nil {
		return e.clientStreamEnded(ctx, sctx, t, err, sent, len(reqs)), nil
	}
	var out callwire.Frame
	defer out.Release()
	if err := stream.RecvMsg(&out); err != nil {
		return e.clientStreamEnded(ctx, sctx, t, err, sent, len(reqs)), nil
	}
	return ResponseResult(ctx, t, out.Bytes())
}

// clientStreamEnded is the error result of a client stream: the status as
// the unary path reports it, plus how far the sending got when the backend
// stopped reading early, which tells a model which requests took effect.
func (e *Env) clientStreamEnded(ctx, sctx context.Context, t *compiled.Tool, err error, sent, total int) *mcp.CallToolResult {
	st := streamStatus(ctx, sctx, err)
	res := e.Failed(ctx, t, st)
	if ctx.Err() != nil {
		return res // the caller left; nobody reads the result
	}
	if note := deadlineNote(st, sctx, t.Call.Timeout); note != "" {
		res.Content[0].Text += "\n" + note
	}
	if sent < total {
		res.Content[0].Text += fmt.Sprintf("\nThe stream ended after %d of %d request messages were sent.", sent, total)
	}
	return res
}

// collect receives a server or bidirectional stream into a result, within
// the limits, reporting each message as progress when asked to.
func (e *Env) collect(ctx, sctx context.Context, cancel context.CancelCauseFunc, req *mcp.CallToolRequest, t *compiled.Tool, stream grpc.ClientStream, win *watch.Window) (*mcp.CallToolResult, error) {
	c := collect.New(e.StreamMaxMessages, e.StreamMaxBytes)
	c.Watch(win, e.ResultBudget)
	progress := req.ProgressToken != nil
	// Messages arrive in wire form and are transcoded straight into the
	// result (no dynamic message), as the unary path does; the pooled
	// frame goes back before the next receive.
	var frame callwire.Frame
	defer frame.Release()
	for {
		frame.Release()
		err := stream.RecvMsg(&frame)
		if errors.Is(err, io.EOF) {
			return streamResult(c, watch.EndedStream), nil
		}
		if err != nil && win.Ended(ctx, sctx, err) {
			return streamResult(c, watch.EndedTime), nil
		}
		if err != nil {
			return e.streamEnded(ctx, sctx, t, c, err), nil
		}
		more, err := c.Add(ctx, frame.Bytes(), t.AppendResponse)
		if unknown := (*anytypes.UnknownTypeError)(nil); errors.As(err, &unknown) {
			cancel(err)
			return unshown(c, unknown), nil
		}
		if err != nil {
			cancel(err)
			return nil, fmt.Errorf("encoding message %d of %s: %w", c.N()+1, t.Call.Method, err)
		}
		if progress && c.Added() {
			if err := req.NotifyProgress(ctx, float64(c.N()), 0, c.Progress(t.Call.ProgressLabel)); err != nil {
				// The caller's stream is gone or broken: the result will
				// not reach it either, but the limits still bound the
				// call, so stop reporting and let ctx decide.
				progress = false
				e.Logger.Debug("progress notification failed; no more progress for this call",
					"tool", t.Definition.Name, "err", err)
			}
		}
		if !more {
			cancel(errLimit)
			e.Logger.Debug("stream truncated", "tool", t.Definition.Name, "reason", c.Reason())
			return streamResult(c, watch.EndedLimit), nil
		}
		if win != nil && c.Added() {
			win.Saw(frame.Bytes())
			if win.Messages() > 0 && c.N() >= win.Messages() {
				cancel(watch.ErrEnded)
				return streamResult(c, watch.EndedMessages), nil
			}
		}
	}
}

// errLimit is the cancellation cause when a message or byte limit stopped
// the collection.
var errLimit = errors.New("gateway: stream limit reached")

// streamEnded is the result of a server or bidirectional stream that ended
// with a non-OK status (or could not start): an error result whose first
// text block is the status as rpcstatus.Result writes it, plus a note on a
// deadline; whose structuredContent (and second text block) holds the
// messages received before the error, in the output schema's shape with
// its optional "error" property. c may be nil (no messages yet).
func (e *Env) streamEnded(ctx, sctx context.Context, t *compiled.Tool, c *collect.Collector, err error) *mcp.CallToolResult {
	st := streamStatus(ctx, sctx, err)
	res := e.Failed(ctx, t, st)
	if ctx.Err() != nil {
		return res // the caller left; nobody reads the result
	}
	if c == nil {
		c = collect.New(0, 0)
	}
	text := res.Content[0].Text
	if note := deadlineNote(st, sctx, t.Call.Timeout); note != "" {
		text += "\n" + note
	}
	text += fmt.Sprintf("\n%d message(s) arrived before the error; they are in structuredContent.%s and in the next content block.",
		c.N(), schema.StreamMessagesProperty)
	js := c.Finish(telemetry.CodeName(st.Code()) + ": " + st.Message())
	res.Content = []mcp.Content{{Type: mcp.ContentText, Text: text}, {Type: mcp.ContentText, Structured: true}}
	res.StructuredContent = js
	return res
}

// streamStatus is the status that ended a stream. When the gateway itself
// cut the stream short for a failed send, the send's error is the status;
// otherwise it is what gRPC reported (DEADLINE_EXCEEDED at the timeout).
// A caller that left gets CANCELLED, whatever the stream reported.
func streamStatus(ctx, sctx context.Context, err error) *status.Status {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err())
	}
	if se := (*sendError)(nil); errors.As(context.Cause(sctx), &se) {
		return status.Convert(se.err)
	}
	return status.Convert(err)
}

// deadlineNote explains a DEADLINE_EXCEEDED the gateway's own stream
// timeout caused, naming the setting, so a model or operator knows the
// backend was not at fault. Whether the deadline has passed is read from
// the clock, not from sctx.Err(): gRPC sends the deadline to the backend,
// which enforces it too, and on a loaded machine the backend's
// DEADLINE_EXCEEDED can arrive before the local timer has cancelled sctx.
func deadlineNote(st *status.Status, sctx context.Context, timeout time.Duration) string {
	if st.Code() != codes.DeadlineExceeded {
		return ""
	}
	if d, ok := sctx.Deadline(); !ok || time.Now().Before(d) {
		return ""
	}
	return fmt.Sprintf("The gateway's stream timeout of %s ended the stream.", timeout)
}

// streamResult is the normal (non-error) result of a collected stream:
// the messages, plus the truncated entry when a limit stopped it and a
// watch's account of how its window ended (ended, one of watch.EndedTime
// and the others).
func streamResult(c *collect.Collector, ended string) *mcp.CallToolResult {
	c.End(ended)
	return JSONResult(c.Finish(""))
}

// unshown is the result of a stream cancelled at a message the gateway
// cannot show (anytypes.UnknownTypeError): an error that says why, with the
// messages before it, as streamEnded gives them.
func unshown(c *collect.Collector, unknown *anytypes.UnknownTypeError) *mcp.CallToolResult {
	why := unknown.Sentence("a value")
	text := fmt.Sprintf("The backend's stream sent message %d, but the gateway cannot show it: %s; the gateway cancelled the stream.\n"+
		"%d message(s) arrived before it; they are in structuredContent.%s and in the next content block.",
		c.N()+1, why, c.N(), schema.StreamMessagesProperty)
	js := c.Finish(fmt.Sprintf("message %d: %s", c.N()+1, why))
	res := UnshownResult(unknown, text)
	res.Content = append(res.Content, mcp.Content{Type: mcp.ContentText, Structured: true})
	res.StructuredContent = js
	return res
}

// decodeRequests converts the "requests" argument of a client or
// bidirectional stream into request messages. "requests" is an array of
// message objects; a single object is accepted as a one-element stream, and
// a JSON-encoded string holding either form is decoded (models sometimes
// send that, and the unary validator accepts it too). Every problem is
// reported with its path (requests[2].observation.animalId).
func decodeRequests(t *compiled.Tool, args []byte) ([]any, schema.Warnings, error) {
	const prop = schema.StreamRequestsProperty
	var warnings schema.Warnings
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return nil, warnings, violation("", "json", "a JSON object", "")
	}
	var vs []schema.Violation
	for k := range fields {
		if k != prop {
			vs = append(vs, schema.Violation{Path: k, Rule: "unknown_field", Expected: fmt.Sprintf("unknown field (expected only %q)", prop)})
		}
	}
	raw := bytes.TrimSpace(fields[prop])
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && (inner[0] == '[' || inner[0] == '{') {
				raw = inner
			}
		}
	}
	var elems []json.RawMessage
	switch {
	case len(raw) == 0 || string(raw) == "null":
		vs = append(vs, schema.Violation{Path: prop, Rule: "required",
			Expected: fmt.Sprintf("required: an array of %s messages ([] sends none)", t.Call.Input.Descriptor().FullName())})
	case raw[0] == '{':
		elems = []json.RawMessage{raw}
	case raw[0] == '[':
		if err := json.Unmarshal(raw, &elems); err != nil {
			vs = append(vs, schema.Violation{Path: prop, Rule: "json", Expected: "a JSON array: " + err.Error()})
		}
	default:
		vs = append(vs, schema.Violation{Path: prop, Rule: "type", Expected: "an array of objects", Received: brief(raw)})
	}
	msgs := make([]any, 0, len(elems))
	omitted := 0 // violations beyond schema.MaxExplained, counted only
	for i, e := range elems {
		path := prop + "[" + strconv.Itoa(i) + "]"
		e = bytes.TrimSpace(e)
		if len(e) == 0 || e[0] != '{' {
			if len(vs) >= schema.MaxExplained {
				omitted++
				continue
			}
			vs = append(vs, schema.Violation{Path: path, Rule: "type", Expected: "an object", Received: brief(e)})
			continue
		}
		if len(vs) == 0 {
			if wire, ok := t.EncodeRequest(e); ok {
				if hook := wireHook.Load(); hook != nil {
					(*hook)(t, wire)
				}
				msgs = append(msgs, callwire.Encoded(wire))
				continue
			}
		}
		m := t.Call.Input.New().Interface()
		w, err := t.Call.Validator.DecodeInjected(e, m, t.Injector())
		if err != nil {
			var ve *schema.ValidationError
			if !errors.As(err, &ve) {
				return nil, schema.Warnings{}, fmt.Errorf("%s: %w", path, err)
			}
			omitted += ve.Omitted
			for _, v := range ve.Violations {
				if len(vs) >= schema.MaxExplained {
					omitted++
					continue
				}
				v.Path = schema.JoinPath(path, v.Path)
				vs = append(vs, v)
			}
			continue
		}
		warnings.Merge(path, w)
		msgs = append(msgs, m)
	}
	if len(vs) > 0 {
		return nil, schema.Warnings{}, &schema.ValidationError{Violations: vs, Omitted: omitted}
	}
	return msgs, warnings, nil
}

func violation(path, rule, expected, received string) error {
	return &schema.ValidationError{Violations: []schema.Violation{{Path: path, Rule: rule, Expected: expected, Received: received}}}
}

// brief is a received value for an error message, cut to about 64 bytes.
func brief(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:61]) + "..."
	}
	return string(raw)
}
