package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// watchResult is structuredContent of a watch tool.
type watchResult struct {
	streamResult
	Window *struct {
		Ended    string  `json:"ended"`
		Seconds  float64 `json:"seconds"`
		Messages int     `json:"messages"`
		Resume   *struct {
			Field string `json:"field"`
			Value string `json:"value"`
		} `json:"resume"`
		Note string `json:"note"`
	} `json:"window"`
}

func checkWatchResult(t *testing.T, sg *streamGateway, tool string, res *sdk.CallToolResult) watchResult {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: a watch's window is not an error: %s", tool, res.Content[0].(*sdk.TextContent).Text)
	}
	checkStreamResult(t, sg, tool, res)
	var r watchResult
	js, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	if r.Window == nil {
		t.Fatalf("%s: no window in %s", tool, js)
	}
	if r.Window.Messages != len(r.Messages) {
		t.Errorf("window.messages %d, %d messages", r.Window.Messages, len(r.Messages))
	}
	return r
}

// TestWatchWindow: WatchFeedings is open-ended by its name. A call
// collects for the window it chose (within the operator's maximum), then
// returns what arrived as a success that says how the window ended and
// the last feeding.sequence to resume from; a stream that ends first ends
// the call then; an error mid-stream is still an error.
func TestWatchWindow(t *testing.T) {
	sg := startStreamGateway(t, &gateway.Options{Calls: gateway.CallOptions{Watch: gateway.WatchOptions{Window: 300 * time.Millisecond, MaxWindow: 3 * time.Second}}})
	pc := newProgressCounter()
	cs := httpTransport("2025-11-25")(t, sg, pc.options())
	const tool = "ZooService_WatchFeedings"

	var def *sdk.Tool
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name == tool {
			def = tl
		}
	}
	if def == nil {
		t.Fatalf("no %s", tool)
	}
	if !strings.Contains(def.Description, "Open-ended stream (a watch): a call collects messages for \"window-seconds\" seconds (default 0.3, at most 3)") ||
		!strings.Contains(def.Description, "the last feeding.sequence, to resume from") {
		t.Errorf("description: %s", def.Description)
	}
	var in, out struct {
		Properties map[string]struct {
			Type             string   `json:"type"`
			Maximum          *float64 `json:"maximum"`
			ExclusiveMinimum *float64 `json:"exclusiveMinimum"`
		} `json:"properties"`
	}
	js, _ := json.Marshal(def.InputSchema)
	_ = json.Unmarshal(js, &in)
	if p := in.Properties["window-seconds"]; p.Type != "number" || p.Maximum == nil || *p.Maximum != 3 || p.ExclusiveMinimum == nil {
		t.Errorf("inputSchema's window-seconds: %s", js)
	}
	if p := in.Properties["window-messages"]; p.Type != "integer" {
		t.Errorf("inputSchema's window-messages: %s", js)
	}
	js, _ = json.Marshal(def.OutputSchema)
	_ = json.Unmarshal(js, &out)
	if p := out.Properties["window"]; p.Type != "object" {
		t.Errorf("outputSchema has no window: %s", js)
	}

	t.Run("window ends", func(t *testing.T) {
		start := time.Now()
		res := callWithProgress(t, cs, tool, "w1", map[string]any{"animalId": cueBlock, "window-seconds": 1.5})
		if el := time.Since(start); el < 1500*time.Millisecond || el > time.Minute {
			t.Errorf("returned after %s, want about the 1.5s window", el)
		}
		r := checkWatchResult(t, sg, tool, res)
		w := r.Window
		if len(r.Messages) != 2 || w.Ended != "time" || w.Seconds != 1.5 || w.Resume == nil ||
			w.Resume.Field != "feeding.sequence" || w.Resume.Value != "2" || !strings.Contains(w.Note, "call again from feeding.sequence 2") {
			t.Errorf("result: %+v, window %+v", r.streamResult, w)
		}
		// The window ends the backend's stream too (by cancelling it: the
		// stream's deadline stays the stream timeout).
		if err := sg.backend.waitEnded(t, "WatchFeedings"); !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the backend saw %v, want its stream ended", err)
		}
		if n, _ := pc.settled(t, cs, "w1"); n != 2 {
			t.Errorf("%d progress notifications, want one per message", n)
		}
	})

	t.Run("default window", func(t *testing.T) {
		r := checkWatchResult(t, sg, tool, call(t, cs, tool, map[string]any{"animalId": cueBlock}))
		if r.Window.Ended != "time" || r.Window.Seconds != 0.3 {
			t.Errorf("window %+v", r.Window)
		}
		_ = sg.backend.waitEnded(t, "WatchFeedings")
	})

	t.Run("bounded by the maximum", func(t *testing.T) {
		start := time.Now()
		r := checkWatchResult(t, sg, tool, call(t, cs, tool, map[string]any{"animalId": cueBlock, "window-seconds": "3600"}))
		if el := time.Since(start); el < 3*time.Second || el > time.Minute {
			t.Errorf("returned after %s, want about the 3s maximum", el)
		}
		if r.Window.Ended != "time" || r.Window.Seconds != 3 || !strings.Contains(r.Window.Note, "The 3600s window asked for was cut to 3s") {
			t.Errorf("window %+v", r.Window)
		}
		_ = sg.backend.waitEnded(t, "WatchFeedings")
	})

	t.Run("message count", func(t *testing.T) {
		r := checkWatchResult(t, sg, tool, call(t, cs, tool, map[string]any{"animalId": cueMany, "count": 1000, "window-messages": 3}))
		if len(r.Messages) != 3 || r.Window.Ended != "messages" || r.Window.Resume == nil || r.Window.Resume.Value != "3" {
			t.Errorf("%d messages, window %+v", len(r.Messages), r.Window)
		}
		_ = sg.backend.waitEnded(t, "WatchFeedings")
	})

	t.Run("stream ends early", func(t *testing.T) {
		// Ended "stream", not "time": the call returned when the stream
		// did, not at the window's end.
		r := checkWatchResult(t, sg, tool, call(t, cs, tool, map[string]any{"animalId": "leo", "count": 2, "interval": "0.01s", "window-seconds": 30}))
		if len(r.Messages) != 2 || r.Window.Ended != "stream" || r.Window.Resume == nil || r.Window.Resume.Value != "2" {
			t.Errorf("%d messages, window %+v", len(r.Messages), r.Window)
		}
		if err := sg.backend.waitEnded(t, "WatchFeedings"); err != nil {
			t.Errorf("the backend saw %v for a complete stream", err)
		}
	})

	t.Run("error mid-stream", func(t *testing.T) {
		// Longer than the test backend takes to end a failed stream (its
		// interceptor waits up to 1s for a cancellation to land).
		res := call(t, cs, tool, map[string]any{"animalId": cueFail, "window-seconds": 3})
		msg := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError || !strings.Contains(msg, "UNAVAILABLE: feeder offline") || !strings.Contains(msg, "3 message(s) arrived before the error") {
			t.Errorf("isError=%v %q", res.IsError, msg)
		}
		if r := checkStreamResult(t, sg, tool, res); len(r.Messages) != 3 || r.Error != "UNAVAILABLE: feeder offline" {
			t.Errorf("structuredContent %+v", r)
		}
		if strings.Contains(msg, `"window"`) {
			t.Errorf("an error result carries a window: %s", msg)
		}
	})

	t.Run("bad window", func(t *testing.T) {
		for _, args := range []map[string]any{
			{"window-seconds": -1}, {"window-seconds": "soon"}, {"window-messages": 1.5},
		} {
			res := call(t, cs, tool, args)
			msg := res.Content[0].(*sdk.TextContent).Text
			if !res.IsError || !strings.Contains(msg, "window-") {
				t.Errorf("%v: isError=%v %q", args, res.IsError, msg)
			}
		}
	})
}

// TestWatchByPatternAndSearchMode: an operator pattern makes the
// bidirectional ChatWithKeeper a watch, and a watch called through
// search mode's call_tool has the same window; search_tools shows the
// window arguments.
func TestWatchByPatternAndSearchMode(t *testing.T) {
	sg := startStreamGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeSearch,
	},
		Calls: gateway.CallOptions{
			Watch: gateway.WatchOptions{Methods: []string{"zoo.v1.ZooService/ChatWithKeeper"}, Window: 200 * time.Millisecond},
		}})
	cs := httpTransport("2025-11-25")(t, sg, nil)

	fs := searchTools(t, cs, map[string]any{"query": "chat with keeper"})
	var chat *found
	for i := range fs {
		if fs[i].Name == "ZooService_ChatWithKeeper" {
			chat = &fs[i]
		}
	}
	if chat == nil || !strings.Contains(string(chat.InputSchema), `"window-seconds"`) || !strings.Contains(chat.Description, "Open-ended stream (a watch)") {
		t.Fatalf("search_tools does not show ChatWithKeeper as a watch: %+v", chat)
	}

	for _, c := range []struct{ tool, cue string }{
		{"ZooService_ChatWithKeeper", cueBlock}, {"ZooService_WatchFeedings", cueBlock},
	} {
		args := map[string]any{"animalId": c.cue, "window-seconds": 0.5}
		if c.tool == "ZooService_ChatWithKeeper" {
			args = map[string]any{"requests": []any{map[string]any{"animalId": c.cue}}, "window-seconds": 0.5}
		}
		res := call(t, cs, gateway.CallToolName, map[string]any{"name": c.tool, "arguments": args})
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, res.Content[0].(*sdk.TextContent).Text)
		}
		var r watchResult
		js, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(js, &r); err != nil || r.Window == nil || r.Window.Ended != "time" || r.Window.Seconds != 0.5 || r.Window.Messages != len(r.Messages) {
			t.Errorf("%s: %s", c.tool, js)
		}
		method := strings.TrimPrefix(c.tool, "ZooService_")
		if err := sg.backend.waitEnded(t, method); !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: the backend saw %v, want its stream ended", method, err)
		}
	}
}

// TestWatchUnderStreamTimeout: a stream timeout shorter than the window
// bounds it, and its end is still the window's.
func TestWatchUnderStreamTimeout(t *testing.T) {
	sg := startStreamGateway(t, &gateway.Options{Calls: gateway.CallOptions{StreamTimeout: 400 * time.Millisecond, Watch: gateway.WatchOptions{Window: gateway.DefaultWatchWindow}}})
	cs := httpTransport("2025-11-25")(t, sg, nil)
	r := checkWatchResult(t, sg, "ZooService_WatchFeedings", call(t, cs, "ZooService_WatchFeedings", map[string]any{"animalId": cueBlock}))
	if r.Window.Ended != "time" || r.Window.Seconds != 0.4 {
		t.Errorf("window %+v", r.Window)
	}
	_ = sg.backend.waitEnded(t, "WatchFeedings")
}

// TestWatchEndsAtResultBudget: a watch whose messages would outgrow the
// result budget ends its window there, so the answer is not cut after
// it and the resume value is the last message the model is shown.
func TestWatchEndsAtResultBudget(t *testing.T) {
	sg := startStreamGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: 4096}, Calls: gateway.CallOptions{Watch: gateway.WatchOptions{Window: 10 * time.Second}}})
	cs := httpTransport("2025-11-25")(t, sg, nil)
	const tool = "ZooService_WatchFeedings"
	res := call(t, cs, tool, map[string]any{"animalId": cueMany, "count": 1000})
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok && strings.Contains(tc.Text, "was cut to fit") {
			t.Fatalf("the watch's answer was cut after its window: %s", tc.Text)
		}
	}
	r := checkWatchResult(t, sg, tool, res)
	if n := len(r.Messages); n == 0 || n >= 1000 || r.Window.Ended != "limit" || r.Window.Resume == nil || r.Window.Resume.Value != fmt.Sprint(n) {
		t.Fatalf("%d messages, window %+v", n, r.Window)
	}
	_ = sg.backend.waitEnded(t, "WatchFeedings")
}
