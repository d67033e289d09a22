package realservices

import (
	"regexp"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// TestTemporalPayloadBytes: Temporal's payload metadata is bytes. The text
// a model writes where base64 belongs is refused with the value to send
// when it is not canonical base64 (json/plain), and sent with a warning
// when it is (json); the real server then answers as it does.
func TestTemporalPayloadBytes(t *testing.T) {
	tp := startTemporal(t, gateway.Backend{}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	c := &caller{t: t, cs: tp.client(t)}
	start := func(wid, encoding string) map[string]any {
		return map[string]any{"namespace": namespace, "workflowId": wid, "workflowType": map[string]any{"name": "OrderWorkflow"},
			"taskQueue": map[string]any{"name": "orders"}, "requestId": "req-" + wid,
			"input": map[string]any{"payloads": []any{map[string]any{"metadata": map[string]any{"encoding": encoding}, "data": "eyJhIjoxfQ=="}}}}
	}
	text := c.fails("WorkflowService_StartWorkflowExecution", start("bytes-literal", "json/plain"))
	if !strings.Contains(text, `the base64 of the text "json/plain" is "anNvbi9wbGFpbg=="`) {
		t.Errorf("json/plain: want a refusal giving its base64, got:\n%s", text)
	}
	res, text, _ := c.call("WorkflowService_StartWorkflowExecution", start("bytes-word", "json"))
	if !strings.Contains(text, `"json" was read as base64`) || !strings.Contains(text, `"anNvbg=="`) {
		t.Errorf("json: want the call made with a warning giving the base64 of the word, got (error %v):\n%s", res.IsError, text)
	}
	// The canonical form starts the workflow, with no warning.
	res, text, _ = c.call("WorkflowService_StartWorkflowExecution", start("bytes-right", "anNvbi9wbGFpbg=="))
	if res.IsError || strings.Contains(text, "probably not what you meant") {
		t.Errorf("the base64 of json/plain: %s", text)
	}
}

// TestTemporalPaging: Temporal pages its histories by maximumPageSize and
// nextPageToken (bytes); a page's result says how to get the next one
// with those fields, and following it reads the whole history, one event
// a page.
func TestTemporalPaging(t *testing.T) {
	tp := startTemporal(t, gateway.Backend{}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	c := &caller{t: t, cs: tp.client(t)}
	wid := "paged"
	runID, _ := c.ok("WorkflowService_StartWorkflowExecution", map[string]any{"namespace": namespace, "workflowId": wid,
		"workflowType": map[string]any{"name": "OrderWorkflow"}, "taskQueue": map[string]any{"name": "orders"}, "requestId": "req-" + wid})["runId"].(string)
	exec := map[string]any{"workflowId": wid, "runId": runID}
	for _, signal := range []string{"a", "b", "c"} {
		c.ok("WorkflowService_SignalWorkflowExecution", map[string]any{"namespace": namespace, "workflowExecution": exec, "signalName": signal})
	}
	next := regexp.MustCompile(`More results: call WorkflowService_GetWorkflowExecutionHistory again with the same arguments and "nextPageToken": "([^"]+)" for the next page.`)
	args := map[string]any{"namespace": namespace, "execution": exec, "maximumPageSize": 1}
	var events []string
	pages := 0
	for page := 0; ; page++ {
		pages++
		if page > 20 {
			t.Fatalf("more than 20 pages of one event: %v", events)
		}
		res, text, sc := c.call("WorkflowService_GetWorkflowExecutionHistory", args)
		if res.IsError {
			t.Fatalf("page %d: %s", page, text)
		}
		hist, _ := sc["history"].(map[string]any)
		for _, e := range asSlice(hist["events"]) {
			ev, _ := e.(map[string]any)
			events = append(events, strings.TrimPrefix(ev["eventType"].(string), "EVENT_TYPE_"))
		}
		m := next.FindStringSubmatch(text)
		if m == nil {
			break
		}
		args["nextPageToken"] = m[1]
	}
	// Started, the first workflow task scheduled, three signals; the
	// server may add nothing else while no worker polls.
	want := "WORKFLOW_EXECUTION_STARTED WORKFLOW_TASK_SCHEDULED WORKFLOW_EXECUTION_SIGNALED WORKFLOW_EXECUTION_SIGNALED WORKFLOW_EXECUTION_SIGNALED"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("the history read page by page:\n got %s\nwant %s", got, want)
	}
	if pages < len(events) {
		t.Errorf("%d events in %d pages of maximumPageSize 1: the pages were not followed", len(events), pages)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
