// Package watch makes the tools of open-ended streams: watches.
//
// Some streams never end on their own: a Watch, a Subscribe, a Tail, a
// StreamingPull streams changes until the client goes away. Collected like
// any stream, such a call would hold the model until the stream timeout
// and then report DEADLINE_EXCEEDED, an error, for what is the expected
// ending. So the gateway makes each such method a watch tool: a call
// collects for a window the model may choose (windowSecondsArg,
// windowMessagesArg, within the operator's Settings and the tool's
// stream timeout), then cancels the stream and returns what arrived as a
// successful result whose "window" member says how the window ended, how
// many messages came and, when the messages carry one, the API's own
// revision or resume token to continue from. A stream that ends before
// the window ends the call then; a non-OK status is an error as for any
// stream.
//
// A stream is open-ended when its method's (mcpgateway.v1.tool) watch
// option says so, else when an operator pattern (Settings.Patterns)
// matches it, else by its name (watchWords).
//
// It reads the methods' descriptors, a call's arguments and the
// messages' wire bytes, nothing of the gateway's tools: the catalog keeps
// what Compile returns (the tool's *Spec) and the gateway's stream path
// opens a call's Window and asks it how the stream ended.
package watch

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/wordsplit"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// The window arguments. A proto field name cannot hold '-', so these
// never collide with a request's fields (Compile checks JSON names
// too, which an API could set to anything).
const (
	windowSecondsArg  = "window-seconds"
	windowMessagesArg = "window-messages"
	// Property is the result's account of the window, beside the
	// stream result's own "messages".
	Property = "window"
)

// Settings are the operator's choices (the gateway's WatchOptions,
// checked and resolved): the default and longest windows, the method
// patterns (methodglob.Compile's) that name more streams open-ended, and
// whether names count.
type Settings struct {
	Window, MaxWindow time.Duration
	Patterns          []string
	ByName            bool
}

// watchWords are the words of a method name that mark an open-ended
// stream, matched against the name's words as the describer splits them
// (WatchFeedings, SubscribeEvents, TailLogs, StreamingPull,
// LongPollUpdates; an acronym ends before a word: HTTPWatch).
var watchWords = map[string]bool{"watch": true, "subscribe": true, "tail": true, "follow": true, "listen": true}

// watchPairs are two-word marks.
var watchPairs = map[string]bool{"streaming pull": true, "long poll": true}

// OpenEnded says whether the server or bidirectional stream m is
// open-ended: its option, else an operator pattern, else its name.
func (s Settings) OpenEnded(m protoreflect.MethodDescriptor, to *mcpgatewayv1.Tool) bool {
	if !m.IsStreamingServer() {
		return false
	}
	if to != nil && to.Watch != nil {
		return to.GetWatch()
	}
	if methodglob.MatchAny(s.Patterns, string(m.Parent().FullName())+"/"+string(m.Name())) {
		return true
	}
	if !s.ByName {
		return false
	}
	words := wordsplit.Split(string(m.Name()), wordsplit.Rules{Digits: wordsplit.DigitsJoin, Acronyms: true})
	for i, w := range words {
		if watchWords[w] || i > 0 && watchPairs[words[i-1]+" "+w] {
			return true
		}
	}
	return false
}

// Spec is what a watch tool's calls need.
type Spec struct {
	window, maxWindow time.Duration
	// timeout is the tool's stream timeout, which bounds every window (a
	// window never outlives the call's deadline).
	timeout time.Duration
	// resume is the path from a message to the field the API resumes
	// from, empty when the messages carry none; resumeName is its name as
	// the messages show it ("header.revision").
	resume     []protoreflect.FieldDescriptor
	resumeName string
}

// Compile makes the stream method m a watch when it is open-ended: the
// Spec its tool keeps and the sentences its description gains; nil and
// "" otherwise (a unary or client stream, or a server stream whose
// arguments leave no room for the window's). timeout is the tool's
// stream timeout.
func Compile(m protoreflect.MethodDescriptor, to *mcpgatewayv1.Tool, s Settings, timeout time.Duration, protoNames bool) (*Spec, string) {
	if !s.OpenEnded(m, to) {
		return nil, ""
	}
	if !m.IsStreamingClient() {
		if !schema.IsObject(m.Input()) {
			return nil, "" // the arguments are {"value": ...}: no room for the window's
		}
		fs := m.Input().Fields()
		for i := range fs.Len() {
			if n := fs.Get(i).JSONName(); n == windowSecondsArg || n == windowMessagesArg {
				return nil, ""
			}
		}
	}
	// The tool's stream timeout bounds every window, so the description
	// and the schema say the bound a call really has.
	w := &Spec{window: s.Window, maxWindow: s.MaxWindow, timeout: timeout}
	if timeout > 0 {
		w.window, w.maxWindow = min(w.window, timeout), min(w.maxWindow, timeout)
	}
	w.resume = resumePath(m.Output())
	names := make([]string, len(w.resume))
	for i, fd := range w.resume {
		names[i] = string(fd.Name())
		if !protoNames {
			names[i] = fd.JSONName()
		}
	}
	w.resumeName = strings.Join(names, ".")
	resume := ""
	if w.resumeName != "" {
		resume = fmt.Sprintf(" and the last %s, to resume from", w.resumeName)
	}
	return w, fmt.Sprintf("\n\nOpen-ended stream (a watch): a call collects messages for %q seconds (default %s, at most %s) or until %q messages arrived, then ends the stream and returns them as a successful result whose %q says how it ended%s; call again to keep watching.",
		windowSecondsArg, seconds(w.window), seconds(w.maxWindow), windowMessagesArg, Property, resume)
}

// seconds writes d as a number of seconds.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// resumeNames are the names of the fields an API resumes a stream from
// (lowercase, without underscores), in order of preference.
var resumeNames = []string{"resumetoken", "revision", "resourceversion", "cursor", "continuationtoken", "sequence"}

// resumePath finds, in md and in the singular messages it holds (two
// levels down), the scalar field named as a resume position: the
// shallowest, then by resumeNames' order, then by field order.
func resumePath(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	type cand struct {
		path []protoreflect.FieldDescriptor
	}
	level := []cand{{}}
	for range 3 {
		best, bestRank := []protoreflect.FieldDescriptor(nil), len(resumeNames)
		var next []cand
		for _, c := range level {
			msg := md
			if len(c.path) > 0 {
				msg = c.path[len(c.path)-1].Message()
			}
			fs := msg.Fields()
			for i := range fs.Len() {
				fd := fs.Get(i)
				if fd.IsList() || fd.IsMap() {
					continue
				}
				if fd.Kind() == protoreflect.MessageKind {
					if !strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf.") {
						next = append(next, cand{append(append([]protoreflect.FieldDescriptor(nil), c.path...), fd)})
					}
					continue
				}
				if !resumeKind(fd.Kind()) {
					continue
				}
				name := strings.ReplaceAll(strings.ToLower(string(fd.Name())), "_", "")
				for r, n := range resumeNames {
					if n == name && r < bestRank {
						best, bestRank = append(append([]protoreflect.FieldDescriptor(nil), c.path...), fd), r
					}
				}
			}
		}
		if best != nil {
			return best
		}
		level = next
	}
	return nil
}

func resumeKind(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind,
		protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.Sint32Kind, protoreflect.Sint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		return true
	}
	return false
}

// resumeValue reads the resume field along path from a message in wire
// form, as a string (protojson writes 64-bit integers and bytes as
// strings too); false when the message does not carry it.
func resumeValue(wire []byte, path []protoreflect.FieldDescriptor) (string, bool) {
	b := wire
	for i, fd := range path {
		var val []byte
		var typ protowire.Type
		found := false
		for len(b) > 0 {
			num, t, n := protowire.ConsumeTag(b)
			if n < 0 {
				return "", false
			}
			b = b[n:]
			m := protowire.ConsumeFieldValue(num, t, b)
			if m < 0 {
				return "", false
			}
			if num == fd.Number() {
				val, typ, found = b[:m], t, true
			}
			b = b[m:]
		}
		if !found {
			return "", false
		}
		if i < len(path)-1 {
			if typ != protowire.BytesType {
				return "", false
			}
			inner, n := protowire.ConsumeBytes(val)
			if n < 0 {
				return "", false
			}
			b = inner
			continue
		}
		return scalarString(fd.Kind(), typ, val)
	}
	return "", false
}

func scalarString(k protoreflect.Kind, typ protowire.Type, val []byte) (string, bool) {
	switch typ {
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(val)
		if n < 0 {
			return "", false
		}
		switch k {
		case protoreflect.Int32Kind:
			return strconv.FormatInt(int64(int32(v)), 10), true
		case protoreflect.Int64Kind:
			return strconv.FormatInt(int64(v), 10), true
		case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
			return strconv.FormatInt(protowire.DecodeZigZag(v), 10), true
		case protoreflect.Uint32Kind:
			return strconv.FormatUint(uint64(uint32(v)), 10), true
		case protoreflect.Uint64Kind:
			return strconv.FormatUint(v, 10), true
		}
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(val)
		if n < 0 {
			return "", false
		}
		if k == protoreflect.Sfixed32Kind {
			return strconv.FormatInt(int64(int32(v)), 10), true
		}
		return strconv.FormatUint(uint64(v), 10), true
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(val)
		if n < 0 {
			return "", false
		}
		if k == protoreflect.Sfixed64Kind {
			return strconv.FormatInt(int64(v), 10), true
		}
		return strconv.FormatUint(v, 10), true
	case protowire.BytesType:
		v, n := protowire.ConsumeBytes(val)
		if n < 0 {
			return "", false
		}
		if k == protoreflect.BytesKind {
			return base64.StdEncoding.EncodeToString(v), true
		}
		return string(v), true
	}
	return "", false
}

// Window is one call's window: how long and how many messages, as the
// call asked within the bounds, and what it saw.
type Window struct {
	spec     *Spec
	d        time.Duration
	messages int // 0: no count of its own (the stream limits still apply)
	// asked is the window the call asked for when a bound shortened it.
	asked    time.Duration
	deadline time.Time
	resume   string
	hasValue bool
}

// ResultReserve is the room a watch's result keeps, within the
// result budget, for what is not its messages: the window's account, the
// limit's entry and the envelope.
const ResultReserve = 2048

// ErrEnded is the cancellation cause of a stream whose window ended.
var ErrEnded = errors.New("gateway: watch window ended")

// Take removes the window arguments from a watch tool's arguments
// and resolves the window within the bounds: the operator's maximum and
// the tool's stream timeout (a window never outlives the call's
// deadline), and the stream message limit.
func (spec *Spec) Take(args []byte, maxMessages int) ([]byte, *Window, error) {
	w := &Window{spec: spec, d: spec.window}
	if !bytes.Contains(args, []byte(`"window-`)) {
		w.d = min(w.d, spec.timeout)
		return args, w, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return args, w, nil // the decoder reports what is wrong with them
	}
	var vs []schema.Violation
	if raw, ok := fields[windowSecondsArg]; ok {
		delete(fields, windowSecondsArg)
		if s, ok := positiveNumber(raw); ok {
			w.d = time.Duration(s * float64(time.Second))
			if w.d > spec.maxWindow {
				w.asked, w.d = w.d, spec.maxWindow
			}
		} else {
			vs = append(vs, schema.Violation{Path: windowSecondsArg, Rule: "type",
				Expected: fmt.Sprintf("a number of seconds above 0, at most %s", seconds(spec.maxWindow)), Received: brief(raw)})
		}
	}
	if raw, ok := fields[windowMessagesArg]; ok {
		delete(fields, windowMessagesArg)
		if n, ok := positiveNumber(raw); ok && n == float64(int64(n)) {
			w.messages = int(min(n, float64(maxMessages)))
		} else {
			vs = append(vs, schema.Violation{Path: windowMessagesArg, Rule: "type",
				Expected: "a whole number of messages above 0", Received: brief(raw)})
		}
	}
	if len(vs) > 0 {
		return nil, nil, &schema.ValidationError{Violations: vs}
	}
	if w.d > spec.timeout {
		w.asked, w.d = max(w.asked, w.d), spec.timeout
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, nil, fmt.Errorf("arguments without the window: %w", err)
	}
	return rest, w, nil
}

// positiveNumber reads a JSON number above 0, or a string holding one
// (models send "10" as often as 10).
func positiveNumber(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		raw = []byte(s)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil && f > 0 && f < 1e9
}

// brief is a received value for an error message, cut to about 64 bytes.
func brief(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:61]) + "..."
	}
	return string(raw)
}

// Messages is the count of messages the call asked for, 0 for none of
// its own (the stream limits still apply).
func (w *Window) Messages() int { return w.messages }

// Open starts the window's clock: the stream is cancelled when it ends.
// The window is not the stream's deadline, which the backend sees: that
// stays the tool's stream timeout, and a cancellation tells the backend
// the client went away, which is what happened.
func (w *Window) Open(ctx context.Context) (context.Context, func()) {
	w.deadline = time.Now().Add(w.d)
	wctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(w.d, func() { cancel(ErrEnded) })
	return wctx, func() {
		timer.Stop()
		cancel(nil)
	}
}

// Ended says whether the stream stopped because its window ended (and
// not because the caller left): the window's cause, or a
// DEADLINE_EXCEEDED once the window's time has passed (the stream
// timeout, when it bounded the window, fires with the window's timer,
// and the backend's copy of it can arrive before either).
func (w *Window) Ended(ctx, sctx context.Context, err error) bool {
	if w == nil || ctx.Err() != nil {
		return false
	}
	if errors.Is(context.Cause(sctx), ErrEnded) {
		return true
	}
	if status.Code(err) != codes.DeadlineExceeded {
		return false
	}
	// The stream timeout bounded the window and fired first: ctx (the
	// caller's) is live, so the deadline that passed is the stream's.
	return errors.Is(context.Cause(sctx), context.DeadlineExceeded) || !time.Now().Before(w.deadline)
}

// Saw records the resume position a message carries.
func (w *Window) Saw(wire []byte) {
	if w == nil || len(w.spec.resume) == 0 {
		return
	}
	if v, ok := resumeValue(wire, w.spec.resume); ok {
		w.resume, w.hasValue = v, true
	}
}

// How a window ended, as its result says.
const (
	EndedTime     = "time"
	EndedMessages = "messages"
	EndedStream   = "stream"
	EndedLimit    = "limit"
)

// AppendJSON writes the result's "window" member's value.
func (w *Window) AppendJSON(b []byte, ended string, n int) []byte {
	b = append(b, `{"ended":`...)
	b = jsonstr.Append(b, ended)
	b = append(b, `,"seconds":`...)
	b = append(b, seconds(w.d)...)
	b = append(b, `,"messages":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	if w.hasValue {
		b = append(b, `,"resume":{"field":`...)
		b = jsonstr.Append(b, w.spec.resumeName)
		b = append(b, `,"value":`...)
		b = jsonstr.Append(b, w.resume)
		b = append(b, '}')
	}
	b = append(b, `,"note":`...)
	b = jsonstr.Append(b, w.note(ended, n))
	return append(b, '}')
}

// note says in words how the window ended and how to go on.
func (w *Window) note(ended string, n int) string {
	var s string
	switch ended {
	case EndedTime:
		s = fmt.Sprintf("The watch window of %ss ended with %d message(s); the gateway ended the stream, which is the normal end of a watch call.", seconds(w.d), n)
	case EndedMessages:
		s = fmt.Sprintf("The watch window ended at %d message(s), the count asked for; the gateway ended the stream.", n)
	case EndedStream:
		s = fmt.Sprintf("The stream ended by itself after %d message(s), before the %ss window.", n, seconds(w.d))
	default:
		s = fmt.Sprintf("The stream reached the gateway's limit after %d message(s) (see %q); the gateway ended it.", n, schema.StreamTruncatedProperty)
	}
	if w.asked > 0 {
		s += fmt.Sprintf(" The %ss window asked for was cut to %ss, the most this tool allows.", seconds(w.asked), seconds(w.d))
	}
	switch {
	case w.hasValue:
		s += fmt.Sprintf(" To continue from where this window ended, call again from %s %s (the last one seen).", w.spec.resumeName, w.resume)
	case ended != EndedStream:
		s += " Call again to keep watching."
	}
	return s
}

// windowInputSchema are the window arguments' schemas, added to a watch
// tool's inputSchema.
func windowInputSchema(w *Spec) string {
	return fmt.Sprintf(`%q:{"type":"number","exclusiveMinimum":0,"maximum":%s,"description":%q},%q:{"type":"integer","minimum":1,"description":%q}`,
		windowSecondsArg, seconds(w.maxWindow),
		fmt.Sprintf("Gateway option, not a request field: seconds to collect messages before returning them (default %s).", seconds(w.window)),
		windowMessagesArg,
		"Gateway option, not a request field: return once this many messages arrived.")
}

// windowOutputSchema is the result's "window" member's schema.
const windowOutputSchema = `{"type":"object","description":"How the watch window ended; absent in an error result.","properties":{` +
	`"ended":{"type":"string","enum":["time","messages","stream","limit"],"description":"What ended it: the window's time, the message count asked for, the backend, or the gateway's stream limit."},` +
	`"seconds":{"type":"number"},"messages":{"type":"integer"},` +
	`"resume":{"type":"object","description":"The API's resume position in the last message that carried one.","properties":{"field":{"type":"string"},"value":{"type":"string"}}},` +
	`"note":{"type":"string"}}}`

// addRootProperties inserts props (members of a JSON object, without
// braces) into the root "properties" of a schema document, keeping every
// other byte as it is.
func addRootProperties(doc json.RawMessage, props string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("schema root is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if tok != "properties" {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(v)
		inner := bytes.TrimSpace(v[1 : len(v)-1])
		var out []byte
		out = append(out, doc[:start]...)
		out = append(out, '{')
		out = append(out, inner...)
		if len(inner) > 0 {
			out = append(out, ',')
		}
		out = append(out, props...)
		out = append(out, '}')
		return append(out, doc[end:]...), nil
	}
	i := bytes.IndexByte(doc, '{')
	out := append([]byte(nil), doc[:i+1]...)
	out = append(out, `"properties":{`...)
	out = append(out, props...)
	out = append(out, '}')
	if rest := bytes.TrimSpace(doc[i+1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, doc[i+1:]...), nil
}

// InputSchema adds the window's arguments to a watch tool's input
// schema.
func (w *Spec) InputSchema(in json.RawMessage) (json.RawMessage, error) {
	in, err := addRootProperties(in, windowInputSchema(w))
	if err != nil {
		return nil, fmt.Errorf("window arguments: %w", err)
	}
	return in, nil
}

// OutputSchema adds the window's report to a watch tool's output schema.
func (w *Spec) OutputSchema(out json.RawMessage) (json.RawMessage, error) {
	out, err := addRootProperties(out, strconv.Quote(Property)+":"+windowOutputSchema)
	if err != nil {
		return nil, fmt.Errorf("window result: %w", err)
	}
	return out, nil
}
