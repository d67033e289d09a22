package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// TestStdioStreaming runs each streaming kind through the built binary over
// stdio, with progress notifications counted by the reference client, and
// the --stream-max-messages flag in force.
func TestStdioStreaming(t *testing.T) {
	addr := zootest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "--stdio", "--backend", addr, "--stream-max-messages", "3", "--stream-timeout", "20s")
	var stderr strings.Builder
	cmd.Stderr = &stderr

	var mu sync.Mutex
	progress := map[string]int{}
	client := sdk.NewClient(&sdk.Implementation{Name: "stdio-stream-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress[fmt.Sprint(req.Params.ProgressToken)]++
		},
	})
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()

	callTool := func(name, token string, args map[string]any) map[string]any {
		t.Helper()
		p := &sdk.CallToolParams{Name: name, Arguments: args}
		p.SetProgressToken(token)
		res, err := cs.CallTool(ctx, p)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		sc, _ := res.StructuredContent.(map[string]any)
		if sc == nil {
			t.Fatalf("%s: no structuredContent", name)
		}
		return sc
	}
	waitProgress := func(token string, want int) {
		t.Helper()
		count := func() int {
			mu.Lock()
			defer mu.Unlock()
			return progress[token]
		}
		testkit.WaitFor(t, fmt.Sprintf("%d progress notifications for %s", want, token), func() bool { return count() >= want })
		if n := count(); n != want {
			t.Errorf("%s: %d progress notifications, want %d", token, n, want)
		}
	}

	sc := callTool("ZooService_WatchFeedings", "watch", map[string]any{"count": 5, "interval": "0s"})
	if msgs, _ := sc["messages"].([]any); len(msgs) != 3 || sc["truncated"] == nil ||
		!strings.Contains(fmt.Sprint(sc["truncated"]), "more than 3 messages, the gateway's message limit") {
		t.Errorf("WatchFeedings with --stream-max-messages 3: %v", sc)
	}
	waitProgress("watch", 3)

	obs := map[string]any{"observation": map[string]any{"animalId": "leo", "activityLevel": 5}}
	sc = callTool("ZooService_RecordObservations", "record", map[string]any{"requests": []any{obs, obs}})
	if sc["recordedCount"] != float64(2) {
		t.Errorf("RecordObservations: %v", sc)
	}
	waitProgress("record", 2)

	sc = callTool("ZooService_ChatWithKeeper", "chat", map[string]any{"requests": []any{
		map[string]any{"animalId": "leo", "question": "what does he eat?"},
		map[string]any{"animalId": "leo", "question": "how much does he weigh?"},
	}})
	if msgs, _ := sc["messages"].([]any); len(msgs) != 2 || !strings.Contains(fmt.Sprint(msgs[1]), "weighs") {
		t.Errorf("ChatWithKeeper: %v", sc)
	}
	waitProgress("chat", 2)
}
