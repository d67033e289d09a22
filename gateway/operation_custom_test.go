package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
)

// Compute Engine style operations, with the test backend's small copy of
// the annotations (the real Compute descriptors are tested in estate/).

func TestCustomOperationWaitsForTheFinishedOperation(t *testing.T) {
	srv, g, url := startJobs(t, lrotest.Options{}, nil)
	ins := toolByName(t, g, "Instances_Insert")
	if !strings.Contains(ins.Description, "This is a long-running operation") || !strings.Contains(ins.Description, "ZoneOperations_Get") {
		t.Errorf("description %q", ins.Description)
	}
	if ins.TaskSupport != "" {
		t.Errorf("custom operations cannot be tasks, got task support %q", ins.TaskSupport)
	}
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "Instances_Insert", map[string]any{"project": "p1", "zone": "z1", "instanceName": "vm", "steps": 2})
	if res.IsError {
		t.Fatal(allText(res))
	}
	got := structured(t, g, "Instances_Insert", res)
	if got["status"] != "DONE" || got["targetLink"] != "zones/z1/instances/vm" || got["operation"] != nil {
		t.Errorf("result %v, want the finished Operation", got)
	}
	// Each poll named the operation and carried the request's project and
	// zone, as operation_request_field and operation_response_field say.
	polls := srv.ZonePolls()
	if len(polls) == 0 {
		t.Fatal("no ZoneOperations poll")
	}
	for _, p := range polls {
		if p != [3]string{"p1", "z1", srv.Jobs()[0]} {
			t.Errorf("poll %v", p)
		}
	}
}

func TestCustomOperationErrorAndHandle(t *testing.T) {
	_, g, url := startJobs(t, lrotest.Options{}, &gateway.Options{Calls: gateway.CallOptions{OperationWait: 300 * time.Millisecond}})
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "Instances_Insert", map[string]any{"project": "p", "zone": "z", "instanceName": "bad", "steps": 1, "fail": true})
	if txt := allText(res); !res.IsError || !strings.HasPrefix(txt, "FAILED_PRECONDITION: instance bad cannot be created (HTTP 412)") {
		t.Errorf("failed operation: isError=%v %q", res.IsError, txt)
	}
	res = call(t, cs, "Instances_Insert", map[string]any{"project": "p", "zone": "z", "never": true})
	got := structured(t, g, "Instances_Insert", res)
	op, _ := got["operation"].(map[string]any)
	if op["done"] != false || op["name"] == "" || op["metadata"] == nil {
		t.Fatalf("handle %v", got)
	}
	txt := allText(res)
	if !strings.Contains(txt, "ZoneOperations_Get") || !strings.Contains(txt, `"project":"p"`) || !strings.Contains(txt, `"zone":"z"`) {
		t.Errorf("text %q should give the polling tool and its arguments", txt)
	}
	// The arguments given work.
	var args map[string]any
	i := strings.Index(txt, "ZoneOperations_Get with ")
	if err := json.NewDecoder(strings.NewReader(txt[i+len("ZoneOperations_Get with "):])).Decode(&args); err != nil {
		t.Fatal(err)
	}
	if later := call(t, cs, "ZoneOperations_Get", args); later.IsError {
		t.Errorf("ZoneOperations_Get %v: %s", args, allText(later))
	}
}

func TestCustomOperationProgress(t *testing.T) {
	_, _, url := startJobs(t, lrotest.Options{}, nil)
	msgs := progressMessages(t, url, "Instances_Insert", map[string]any{"project": "p", "zone": "z", "steps": 4}, 5)
	if !strings.Contains(msgs[0], `"status":"RUNNING"`) || !strings.Contains(msgs[2], `"progress":50`) || !strings.Contains(msgs[4], `"status":"DONE"`) {
		t.Errorf("progress messages %q", msgs)
	}
}
