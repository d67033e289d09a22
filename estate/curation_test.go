package estate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/proto"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// curationBlock is the config docs/curation.md's Temporal example gives,
// read from the page so that the page cannot drift from what is tested.
func curationBlock(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/curation.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- estate/curation_test.go (TestCurationTemporal)"
	_, after, ok := strings.Cut(string(doc), marker)
	if !ok {
		t.Fatalf("docs/curation.md has no %q block", marker)
	}
	_, after, _ = strings.Cut(after, "```yaml\n")
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("docs/curation.md: the Temporal block does not end")
	}
	return block
}

// TestCurationTemporal: the Temporal example of docs/curation.md, run by
// the real binary against Temporal's published descriptors served with
// reflection: gateway catalog shows the worker protocol gone, the
// namespace fixed, three descriptions and a hint corrected; a model's
// call reaches Temporal with the fixed namespace, and one naming another
// namespace is refused before it does.
func TestCurationTemporal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway binary")
	}
	var mu sync.Mutex
	var namespaces []string
	srv, err := estate.Serve(&estate.Options{Services: estate.TemporalServices, Unary: map[string]estate.UnaryHandler{
		"/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution": func(_ context.Context, req proto.Message) (proto.Message, error) {
			mu.Lock()
			namespaces = append(namespaces, req.(*workflowservice.StartWorkflowExecutionRequest).GetNamespace())
			mu.Unlock()
			return &workflowservice.StartWorkflowExecutionResponse{RunId: "run-1", Started: true}, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "temporal.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(curationBlock(t), "localhost:7233", srv.Addr, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := testkit.GatewayBinary(t)

	out, err := exec.Command(bin, "catalog", "--json", "--config", cfg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("gateway catalog: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var reports []gateway.ToolReport
	if err := json.Unmarshal(out, &reports); err != nil {
		t.Fatal(err)
	}
	by := map[string]gateway.ToolReport{}
	for _, r := range reports {
		by[r.Name] = r
		if m := r.Method; strings.Contains(m, "WorkflowService/Respond") || regexp.MustCompile(`WorkflowService/Poll.*Queue$`).MatchString(m) {
			t.Errorf("the worker protocol's %s is listed", m)
		}
	}
	start, ok := by["WorkflowService_StartWorkflowExecution"]
	if !ok || !strings.Contains(strings.Join(start.Arguments, ","), "namespace: fixed") || !strings.Contains(start.Description, "Requires: workflowId.") {
		t.Errorf("StartWorkflowExecution: %+v", start)
	}
	if r := by["signal_or_start_workflow"]; r.NameSource != gateway.SourceConfig || r.DescriptionSource != gateway.SourceConfig || r.Hints[1].Value || r.Hints[1].Source != gateway.SourceConfig {
		t.Errorf("SignalWithStartWorkflowExecution renamed, described and not destructive: %+v", r)
	}
	if r := by["WorkflowService_QueryWorkflow"]; r.DescriptionSource != gateway.SourceConfig || !strings.HasPrefix(r.Description, "Asks a running or closed workflow execution") {
		t.Errorf("QueryWorkflow described: %+v", r)
	}
	if r := by["WorkflowService_TerminateWorkflowExecution"]; !r.DescriptionAppended || !strings.Contains(r.Description, "RequestCancelWorkflowExecution instead") {
		t.Errorf("TerminateWorkflowExecution's added sentence: %+v", r)
	}
	for _, c := range by["signal_or_start_workflow"].Check {
		if strings.HasPrefix(c, "description from the name only") {
			t.Errorf("the corrected description is still flagged: %q", c)
		}
	}
	if _, ok := by["WorkflowService_ListNamespaces"]; !ok {
		t.Error("ListNamespaces, which has no namespace argument, is gone")
	}

	// Served: the fixed namespace reaches Temporal.
	cmd := exec.Command(bin, "--config", cfg, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	urlRE := regexp.MustCompile(`MCP \(Streamable HTTP\) at (\S+/mcp)`)
	lines := bufio.NewScanner(stderr)
	var url string
	var log strings.Builder
	for url == "" && lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if m := urlRE.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no MCP URL in the banner:\n%s", log.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "curation", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(args map[string]any) *sdk.CallToolResult {
		// 135 tools: the gateway is in search mode, and a model calls
		// through call_tool.
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{
			"name": "WorkflowService_StartWorkflowExecution", "arguments": args}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	args := map[string]any{"workflowId": "order-1", "workflowType": map[string]any{"name": "ship"}, "taskQueue": map[string]any{"name": "orders"}}
	if res := call(args); res.IsError {
		t.Fatalf("StartWorkflowExecution: %+v", res.Content)
	}
	args["namespace"] = "payments"
	res := call(args)
	txt := ""
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			txt += tc.Text
		}
	}
	if !res.IsError || !strings.Contains(txt, "namespace: set by the gateway's configuration, which no call can change: leave it out") {
		t.Fatalf("a call naming another namespace: %s", txt)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(namespaces) != 1 || namespaces[0] != "orders" {
		t.Fatalf("Temporal saw namespaces %q, want the fixed one once", namespaces)
	}
}
