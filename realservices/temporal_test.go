package realservices

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/realservices/internal/realtest"
)

// frontend is the address of the Temporal server every test shares, and
// namespace the namespace it registered; TestMain starts it.
var frontend, namespace string

// TestMain builds temporaldev (a module of its own: see its doc), starts
// it once for every test, and stops it when they end. Tests keep apart by
// their workflow ids.
func TestMain(m *testing.M) {
	os.Exit(runWithTemporal(m))
}

func runWithTemporal(m *testing.M) int {
	dir, err := os.MkdirTemp("", "realservices")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "temporaldev")
	// Without optimisation, inlining or symbols: Temporal's server is a
	// fixture here, and a cold build of it is most of make test's time
	// on a new machine (about a quarter less CPU this way). The Makefile's
	// vet-temporaldev vets it with the same -gcflags (TEMPORALDEV_GCFLAGS),
	// and so compiles these packages before this build, which then only
	// links: keep the two in step.
	build := exec.Command("go", "build", "-C", "temporaldev", "-gcflags=all=-N -l", "-ldflags=-s -w", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building temporaldev: %v\n%s", err, out)
		return 1
	}
	cmd := exec.Command(bin)
	// The server stops when its standard input closes: when this process
	// ends, however it ends.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	logs := &testkit.SyncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting temporaldev:", err)
		return 1
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "frontend=%s namespace=%s", &frontend, &namespace); err != nil || serr != nil {
		fmt.Fprintf(os.Stderr, "temporaldev did not say where it listens (%q: %v %v); its log:\n%s", line, err, serr, logs.String())
		return 1
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	// The goroutines that tend the server are not the tests' leaks.
	server := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(server); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	return code
}

// temporal is a gateway in front of the shared Temporal server.
type temporal struct {
	url string // the gateway's /mcp
}

// startTemporal starts a gateway in front of the Temporal server with
// opts, b's fields (other than its name and address) set on the backend.
func startTemporal(t *testing.T, b gateway.Backend, opts *gateway.Options) *temporal {
	t.Helper()
	b.Name, b.Address = "temporal", frontend
	return &temporal{url: realtest.Serve(t, b, opts)}
}

// client connects the official MCP Go SDK's client.
func (tp *temporal) client(t *testing.T) *sdk.ClientSession {
	t.Helper()
	return realtest.Connect(t, tp.url, nil)
}

// caller calls tools in one tool mode: typed tools by name, or search
// mode's call_tool.
type caller struct {
	t      *testing.T
	cs     *sdk.ClientSession
	search bool
}

// call calls tool with args and returns the result's text and structured
// content.
func (c *caller) call(tool string, args map[string]any) (res *sdk.CallToolResult, text string, sc map[string]any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if c.search {
		params = &sdk.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": tool, "arguments": args}}
	}
	res, err := c.cs.CallTool(ctx, params)
	if err != nil {
		c.t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteByte('\n')
		}
	}
	if m, ok := res.StructuredContent.(map[string]any); ok {
		sc = m
	} else if res.StructuredContent == nil && !res.IsError && !c.search {
		c.t.Fatalf("%s: no structured content: %s", tool, b.String())
	}
	if c.search && sc == nil && !res.IsError {
		// call_tool answers the tool's result; its JSON is the text.
		_ = json.Unmarshal([]byte(strings.TrimSpace(b.String())), &sc)
	}
	return res, b.String(), sc
}

// ok calls a tool that must succeed.
func (c *caller) ok(tool string, args map[string]any) map[string]any {
	c.t.Helper()
	res, text, sc := c.call(tool, args)
	if res.IsError {
		c.t.Fatalf("%s: %s", tool, text)
	}
	return sc
}

// fails calls a tool that must answer a tool error, and returns its text.
func (c *caller) fails(tool string, args map[string]any) string {
	c.t.Helper()
	res, text, _ := c.call(tool, args)
	if !res.IsError {
		c.t.Fatalf("%s: want a tool error, got %s", tool, text)
	}
	return text
}

// payloads is a Temporal Payloads of one JSON value, as a model writes it:
// the metadata's encoding and the data are base64 of their bytes.
func payloads(v any) map[string]any {
	data, _ := json.Marshal(v)
	return map[string]any{"payloads": []any{map[string]any{
		"metadata": map[string]any{"encoding": base64.StdEncoding.EncodeToString([]byte("json/plain"))},
		"data":     base64.StdEncoding.EncodeToString(data),
	}}}
}

// TestTemporalWorkflow runs what an agent does with Temporal through the
// gateway, in typed and in search mode: list and describe namespaces,
// start a workflow with a JSON input, describe it, find it with a
// visibility query, signal it, read its history, terminate it.
func TestTemporalWorkflow(t *testing.T) {
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		t.Run(mode.String(), func(t *testing.T) {
			tp := startTemporal(t, gateway.Backend{}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: mode}})
			c := &caller{t: t, cs: tp.client(t), search: mode == gateway.ToolModeSearch}

			nss := c.ok("WorkflowService_ListNamespaces", map[string]any{})
			if !strings.Contains(mustJSON(nss), namespace) {
				t.Errorf("ListNamespaces does not list %s: %s", namespace, mustJSON(nss))
			}
			c.ok("WorkflowService_DescribeNamespace", map[string]any{"namespace": namespace})

			wid := "order-" + mode.String()
			start := map[string]any{"namespace": namespace, "workflowId": wid, "workflowType": map[string]any{"name": "OrderWorkflow"},
				"taskQueue": map[string]any{"name": "orders"}, "input": payloads(map[string]any{"item": "book", "qty": 2}), "requestId": "req-" + wid}
			started := c.ok("WorkflowService_StartWorkflowExecution", start)
			runID, _ := started["runId"].(string)
			if runID == "" {
				t.Fatalf("StartWorkflowExecution: no runId: %v", started)
			}
			exec := map[string]any{"workflowId": wid, "runId": runID}
			desc := c.ok("WorkflowService_DescribeWorkflowExecution", map[string]any{"namespace": namespace, "execution": exec})
			if !strings.Contains(mustJSON(desc), "WORKFLOW_EXECUTION_STATUS_RUNNING") {
				t.Errorf("DescribeWorkflowExecution: %s", mustJSON(desc))
			}
			// Visibility is eventually consistent: the workflow appears
			// in the list within a moment.
			testkit.WaitFor(t, "the workflow in ListWorkflowExecutions", func() bool {
				list := c.ok("WorkflowService_ListWorkflowExecutions", map[string]any{"namespace": namespace, "query": "WorkflowType='OrderWorkflow'"})
				return strings.Contains(mustJSON(list), runID)
			})
			c.ok("WorkflowService_SignalWorkflowExecution", map[string]any{"namespace": namespace, "workflowExecution": exec,
				"signalName": "approve", "input": payloads("yes"), "identity": "agent"})
			hist := c.ok("WorkflowService_GetWorkflowExecutionHistory", map[string]any{"namespace": namespace, "execution": exec})
			if h := mustJSON(hist); !strings.Contains(h, "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED") || !strings.Contains(h, "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED") {
				t.Errorf("history lacks the start or the signal: %.2000s", h)
			}
			c.ok("WorkflowService_TerminateWorkflowExecution", map[string]any{"namespace": namespace, "workflowExecution": exec, "reason": "test over"})
			desc = c.ok("WorkflowService_DescribeWorkflowExecution", map[string]any{"namespace": namespace, "execution": exec})
			if !strings.Contains(mustJSON(desc), "WORKFLOW_EXECUTION_STATUS_TERMINATED") {
				t.Errorf("after TerminateWorkflowExecution: %s", mustJSON(desc))
			}
		})
	}
}

// TestTemporalErrors: Temporal's failures, as a model reads them, in
// typed and in search mode: each a tool error with its code, the server's
// message and its typed detail decoded to its fields, though the files of
// Temporal's error details are imported by none of its services' files
// (the gateway looks them up through the server's reflection the first
// time one appears).
func TestTemporalErrors(t *testing.T) {
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		t.Run(mode.String(), func(t *testing.T) {
			tp := startTemporal(t, gateway.Backend{}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: mode}})
			c := &caller{t: t, cs: tp.client(t), search: mode == gateway.ToolModeSearch}
			// decoded checks text's code and that its detail of type
			// name reads as JSON holding want.
			decoded := func(what, text, code, name string, want ...string) {
				t.Helper()
				if !strings.HasPrefix(text, code+": ") {
					t.Errorf("%s: want %s, got %s", what, code, text)
				}
				detail := `- {"@type":"type.googleapis.com/temporal.api.errordetails.v1.` + name + `"`
				if !strings.Contains(text, detail) || strings.Contains(text, "undecodable") || strings.Contains(text, "proto:") || strings.Contains(text, "does not describe") {
					t.Errorf("%s: want the line %s... decoded, got:\n%s", what, detail, text)
				}
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("%s: want %s in the detail, got:\n%s", what, w, text)
					}
				}
			}

			missing := c.fails("WorkflowService_DescribeWorkflowExecution", map[string]any{"namespace": namespace,
				"execution": map[string]any{"workflowId": "no-such-workflow-" + mode.String()}})
			decoded("a missing workflow", missing, "NOT_FOUND", "NotFoundFailure")

			wid := "duplicate-" + mode.String()
			start := map[string]any{"namespace": namespace, "workflowId": wid, "workflowType": map[string]any{"name": "OrderWorkflow"},
				"taskQueue": map[string]any{"name": "orders"}, "requestId": "req-1-" + wid}
			runID, _ := c.ok("WorkflowService_StartWorkflowExecution", start)["runId"].(string)
			if runID == "" {
				t.Fatal("StartWorkflowExecution: no runId")
			}
			t.Cleanup(func() {
				c.call("WorkflowService_TerminateWorkflowExecution", map[string]any{"namespace": namespace,
					"workflowExecution": map[string]any{"workflowId": wid}, "reason": "test over"})
			})
			start["requestId"] = "req-2-" + wid
			dup := c.fails("WorkflowService_StartWorkflowExecution", start)
			decoded("a duplicate start", dup, "ALREADY_EXISTS", "WorkflowExecutionAlreadyStartedFailure",
				`"startRequestId":"req-1-`+wid+`"`, `"runId":"`+runID+`"`)

			ns := "no-such-namespace-" + mode.String()
			unknown := c.fails("WorkflowService_DescribeWorkflowExecution", map[string]any{"namespace": ns,
				"execution": map[string]any{"workflowId": "any"}})
			decoded("an unknown namespace", unknown, "NOT_FOUND", "NamespaceNotFoundFailure", `"namespace":"`+ns+`"`)

			bad := c.fails("WorkflowService_ListWorkflowExecutions", map[string]any{"namespace": namespace, "query": "WorkflowType = = 'x'"})
			if !strings.HasPrefix(bad, "INVALID_ARGUMENT: ") || strings.Contains(bad, "undecodable") || strings.Contains(bad, "proto:") {
				t.Errorf("a malformed visibility query: %s", bad)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// temporalProtos is where make installs Temporal's API .proto sources
// (testdata/temporal: the npm package @temporalio/core-bridge, pinned,
// carries them in sdk-core's api_upstream).
const temporalProtos = "testdata/temporal/node_modules/@temporalio/core-bridge/sdk-core/crates/protos/protos/api_upstream"

// protoSources gives the Temporal API's .proto sources, skipping the test
// when they are not installed, unless REQUIRE_TEMPORAL_PROTOS is set (as
// make test sets it).
func protoSources(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(temporalProtos, "temporal/api/workflowservice/v1/service.proto")); err != nil {
		if os.Getenv("REQUIRE_TEMPORAL_PROTOS") != "" {
			t.Fatalf("Temporal's .proto sources: %v (make unit-realservices installs them)", err)
		}
		t.Skipf("Temporal's .proto sources are not installed (make unit-realservices installs them): %v", err)
	}
	return temporalProtos
}

// tools lists the gateway's tools (typed mode) by name.
func (tp *temporal) tools(t *testing.T) map[string]*sdk.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools := map[string]*sdk.Tool{}
	for tool, err := range tp.client(t).Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	return tools
}

// TestTemporalCatalog: what a model reads of Temporal. The cluster's
// AdminService is hidden unless asked for; every tool says what it does
// and carries its hints; Temporal's comments, from its .proto sources,
// reach the descriptions though its server's reflection has none.
func TestTemporalCatalog(t *testing.T) {
	typed := &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}}
	t.Run("internal", func(t *testing.T) {
		hidden := startTemporal(t, gateway.Backend{}, typed).tools(t)
		exposed := startTemporal(t, gateway.Backend{}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}, Catalog: gateway.CatalogOptions{ExposeInternal: true}}).tools(t)
		admin := func(tools map[string]*sdk.Tool) (n int) {
			for name := range tools {
				if strings.HasPrefix(name, "AdminService_") {
					n++
				}
			}
			return n
		}
		if n := admin(hidden); n != 0 {
			t.Errorf("%d AdminService tools by default, want none", n)
		}
		if n := admin(exposed); n < 20 {
			t.Errorf("%d AdminService tools with ExposeInternal, want Temporal's (dozens)", n)
		}
		if _, ok := hidden["WorkflowService_StartWorkflowExecution"]; !ok || len(hidden) < 100 {
			t.Errorf("%d tools by default, want WorkflowService's and OperatorService's (over 100)", len(hidden))
		}
		t.Logf("%d tools by default, %d with AdminService", len(hidden), len(exposed))
	})
	t.Run("written", func(t *testing.T) {
		// Reflection from a Go server carries no comments: every
		// description is written at discovery, none only names its RPC.
		for name, tool := range startTemporal(t, gateway.Backend{}, typed).tools(t) {
			rpc := name[strings.Index(name, "_")+1:]
			if d := strings.TrimSpace(tool.Description); d == "" || d == rpc || !strings.Contains(d, " ") {
				t.Errorf("%s: description %q", name, d)
			}
			if a := tool.Annotations; a == nil || a.ReadOnlyHint == false && a.DestructiveHint == nil {
				t.Errorf("%s: hints %+v", name, a)
			}
		}
	})
	t.Run("comments", func(t *testing.T) {
		files := descriptors.NewProtoSource([]string{protoSources(t)}, []string{
			"temporal/api/workflowservice/v1/service.proto",
			"temporal/api/operatorservice/v1/service.proto",
		})
		tools := startTemporal(t, gateway.Backend{Files: files}, typed).tools(t)
		start := tools["WorkflowService_StartWorkflowExecution"]
		if start == nil || !strings.Contains(start.Description, "starts a new workflow execution") {
			t.Fatalf("StartWorkflowExecution's description is not its comment: %+v", start)
		}
		if strings.Contains(start.Description, "\n ") {
			t.Errorf("StartWorkflowExecution's comment keeps the space after each //: %q", start.Description)
		}
		t.Logf("StartWorkflowExecution: %s", start.Description)
		commented := 0
		for _, tool := range tools {
			if strings.Contains(tool.Description, "\n") || len(tool.Description) > 120 {
				commented++
			}
		}
		t.Logf("%d of %d tools have a description of more than a line", commented, len(tools))
	})
}

// TestTemporalLongPoll: a long poll with no task to hand out answers at
// the deadline the operator gave its methods (--method-timeout), not at
// the call timeout every other method has.
func TestTemporalLongPoll(t *testing.T) {
	const deadline = 3 * time.Second
	tp := startTemporal(t, gateway.Backend{}, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	},
		Calls: gateway.CallOptions{
			Timeout:        time.Minute,
			MethodTimeouts: []gateway.MethodTimeout{{Match: "temporal.api.workflowservice.v1.WorkflowService/Poll*", Timeout: deadline}},
		},
	})
	c := &caller{t: t, cs: tp.client(t)}
	began := time.Now()
	res, text, _ := c.call("WorkflowService_PollWorkflowTaskQueue", map[string]any{"namespace": namespace,
		"taskQueue": map[string]any{"name": "idle-queue"}, "identity": "agent"})
	took := time.Since(began)
	t.Logf("PollWorkflowTaskQueue answered in %v (error %v): %.300s", took, res.IsError, text)
	if took >= time.Minute/2 {
		t.Errorf("PollWorkflowTaskQueue took %v: the method's deadline of %v did not bound it", took, deadline)
	}
}

// docsCommand returns the arguments of the gateway command docs/temporal.md
// gives, as a shell would split them: the first ```sh block after the
// comment naming TestTemporalDocs, line continuations joined, quotes
// removed, $TEMPORAL_API replaced by protos.
func docsCommand(t *testing.T, protos string) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/temporal.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "(TestTemporalDocs) runs this command")
	_, after, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(after, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/temporal.md: no ```sh block after the comment naming TestTemporalDocs")
	}
	line := strings.ReplaceAll(block, "\\\n", " ")
	var args []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\n' || r == '\t':
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$TEMPORAL_API", protos)
	}
	if len(args) < 3 || strings.Join(args[:3], " ") != "go run ./cmd/gateway" {
		t.Fatalf("docs/temporal.md: the command is not `go run ./cmd/gateway ...`: %q", args)
	}
	return args[3:]
}

// TestTemporalDocs runs the command docs/temporal.md gives, as written
// (the gateway binary, the Temporal server's address for localhost:7233),
// and checks what the page says a model sees: search mode, the comments,
// AdminService hidden and the line that says so, a bounded long poll.
func TestTemporalDocs(t *testing.T) {
	protos, err := filepath.Abs(protoSources(t))
	if err != nil {
		t.Fatal(err)
	}
	args := docsCommand(t, protos)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "localhost:7233", frontend)
	}
	bin := testkit.GatewayBinary(t)
	cmd := exec.Command(bin, append(args, "--listen", "127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	urls := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`MCP \(Streamable HTTP\) at (http://\S+/mcp)`)
		for lines.Scan() {
			logs.Write([]byte(lines.Text() + "\n"))
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	url, ok := <-urls
	if !ok {
		t.Fatalf("the gateway printed no MCP URL:\n%s", logs.String())
	}
	if l := logs.String(); !strings.Contains(l, "internal services not exposed") || !strings.Contains(l, "temporal.server.api.adminservice.v1.AdminService") {
		t.Errorf("no log line names the hidden AdminService:\n%s", l)
	}
	cs := (&temporal{url: url}).client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 {
		t.Errorf("%d tools listed, want search mode's search_tools and call_tool", len(list.Tools))
	}
	c := &caller{t: t, cs: cs, search: true}
	search := func(args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: gateway.SearchToolsName, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("search_tools %v: %v %+v", args, err, res)
		}
		return mustJSON(res)
	}
	if js := search(map[string]any{"query": "start a new workflow run"}); !strings.Contains(js, "WorkflowService_StartWorkflowExecution") || !strings.Contains(js, "starts a new workflow execution") {
		t.Errorf("search_tools does not find StartWorkflowExecution with its comment: %.1500s", js)
	}
	if js := search(map[string]any{"query": "get rid of old workflow executions", "limit": 10}); strings.Contains(js, "AdminService") {
		t.Errorf("search_tools offers AdminService tools: %.1500s", js)
	}
	began := time.Now()
	c.ok("WorkflowService_PollActivityTaskQueue", map[string]any{"namespace": namespace, "taskQueue": map[string]any{"name": "idle-queue"}})
	if took := time.Since(began); took > 15*time.Second {
		t.Errorf("PollActivityTaskQueue took %v: the docs' --method-timeout did not bound it", took)
	}
}
