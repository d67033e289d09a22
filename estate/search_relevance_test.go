package estate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// intents is the search-mode relevance set: what a user would ask an agent
// to do with these five Google Cloud APIs, written in the user's words
// before the ranking was tuned, each with the tools that do it (several
// where more than one does: a zonal and a regional variant, say).
var intents = []struct {
	query string
	want  []string
}{
	// Compute Engine
	{"create a new VM instance", []string{"Instances_Insert"}},
	{"stop a virtual machine", []string{"Instances_Stop"}},
	{"start an instance", []string{"Instances_Start"}},
	{"list all the VMs in a zone", []string{"Instances_List"}},
	{"delete a persistent disk", []string{"Disks_Delete", "RegionDisks_Delete"}},
	{"take a snapshot of a disk", []string{"Disks_CreateSnapshot", "RegionDisks_CreateSnapshot", "Snapshots_Insert"}},
	{"resize a disk", []string{"Disks_Resize", "RegionDisks_Resize"}},
	{"list firewall rules", []string{"Firewalls_List"}},
	{"create a firewall rule", []string{"Firewalls_Insert"}},
	{"reserve a static external IP address", []string{"Addresses_Insert", "GlobalAddresses_Insert"}},
	{"which machine types are available in a zone", []string{"MachineTypes_List"}},
	{"get details of a VPC network", []string{"Networks_Get"}},
	{"reboot a VM", []string{"Instances_Reset"}},
	{"change the machine type of an instance", []string{"Instances_SetMachineType"}},
	{"list the available OS images", []string{"Images_List"}},
	{"read the serial console output of a VM", []string{"Instances_GetSerialPortOutput"}},
	{"resize a managed instance group", []string{"InstanceGroupManagers_Resize", "RegionInstanceGroupManagers_Resize"}},
	{"wait for a zonal operation to finish", []string{"ZoneOperations_Wait"}},
	{"list regions", []string{"Regions_List"}},
	// Pub/Sub
	{"publish a message to a topic", []string{"Publisher_Publish"}},
	{"create a subscription", []string{"Subscriber_CreateSubscription"}},
	{"pull messages from a subscription", []string{"Subscriber_Pull", "Subscriber_StreamingPull"}},
	{"acknowledge received messages", []string{"Subscriber_Acknowledge"}},
	{"delete a pubsub topic", []string{"Publisher_DeleteTopic"}},
	{"list the subscriptions attached to a topic", []string{"Publisher_ListTopicSubscriptions"}},
	{"register a schema for messages", []string{"SchemaService_CreateSchema"}},
	{"seek a subscription back to a snapshot", []string{"Subscriber_Seek"}},
	{"extend the ack deadline of messages", []string{"Subscriber_ModifyAckDeadline"}},
	// Spanner database admin
	{"create a Spanner database", []string{"DatabaseAdmin_CreateDatabase"}},
	{"apply DDL statements to change a database schema", []string{"DatabaseAdmin_UpdateDatabaseDdl"}},
	{"back up a database", []string{"DatabaseAdmin_CreateBackup"}},
	{"restore a database from a backup", []string{"DatabaseAdmin_RestoreDatabase"}},
	{"list spanner backups", []string{"DatabaseAdmin_ListBackups"}},
	{"drop a database", []string{"DatabaseAdmin_DropDatabase"}},
	{"show the DDL schema of a database", []string{"DatabaseAdmin_GetDatabaseDdl"}},
	// Storage control
	{"create a folder in a bucket", []string{"StorageControl_CreateFolder"}},
	{"rename a folder", []string{"StorageControl_RenameFolder"}},
	{"create a managed folder", []string{"StorageControl_CreateManagedFolder"}},
	{"get the storage layout of a bucket", []string{"StorageControl_GetStorageLayout"}},
	// Vertex AI
	{"deploy a model to an endpoint", []string{"EndpointService_DeployModel"}},
	{"get online predictions from an endpoint", []string{"PredictionService_Predict"}},
	{"upload a trained model", []string{"ModelService_UploadModel"}},
	{"create a custom training job", []string{"JobService_CreateCustomJob"}},
	{"cancel a batch prediction job", []string{"JobService_CancelBatchPredictionJob"}},
	{"create a dataset", []string{"DatasetService_CreateDataset"}},
	{"import data into a dataset", []string{"DatasetService_ImportData"}},
	{"list pipeline runs", []string{"PipelineService_ListPipelineJobs"}},
	{"generate content from a prompt", []string{"PredictionService_GenerateContent", "PredictionService_StreamGenerateContent"}},
	{"count the tokens of a prompt", []string{"LlmUtilityService_CountTokens"}},
	{"undeploy a model from an endpoint", []string{"EndpointService_UndeployModel"}},
	{"create a tensorboard experiment", []string{"TensorboardService_CreateTensorboardExperiment"}},
	{"fine-tune a model", []string{"GenAiTuningService_CreateTuningJob"}},
	{"delete an index endpoint", []string{"IndexEndpointService_DeleteIndexEndpoint"}},
}

// Floors of TestSearchRelevance, a little under what README.md reports, so
// that a change to the ranking that loses intents fails. (These 53 intents
// use the API's own words; the relevance set that counts is in
// search_users_test.go.)
const (
	minTop1 = 0.85
	minTop5 = 0.95
)

// TestSearchRelevance serves the estate through the gateway in search
// mode and asks search_tools every intent through the official client. It
// reports top-1 and top-5 (the share of intents with a right tool first,
// and among the first five) and fails below minTop1 and minTop5.
func TestSearchRelevance(t *testing.T) {
	g := newEstateGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})
	cs := connect(t, g)

	// Every expected name is a tool of the catalog (an exact name comes
	// first, with its schema), so a typo in the set cannot pass for a miss.
	for _, in := range intents {
		for _, w := range in.want {
			if got, schema, _ := searchAnswer(t, cs, w, 1); len(got) != 1 || got[0] != w || !schema {
				t.Errorf("%q expects %s, which is no tool of the estate (its search: %v, schema %v)", in.query, w, got, schema)
			}
		}
	}
	// Every tool's exact name brings it first with its input schema, the
	// largest included.
	exact := 0
	for _, svc := range estate.Services() {
		for i := range svc.Methods().Len() {
			name := string(svc.Name()) + "_" + string(svc.Methods().Get(i).Name())
			got, schema, _ := searchAnswer(t, cs, name, 1)
			if len(got) == 1 && got[0] == name {
				exact++
				if !schema {
					t.Errorf("%s: found by its exact name without its input schema", name)
				}
			}
		}
	}
	t.Logf("%d tools found first, with their schema, by their exact Service_Method name", exact)
	if exact != estate.NumMethods {
		t.Errorf("only %d of %d tools found first by their Service_Method name", exact, estate.NumMethods)
	}
	// No answer is over the bound, even at the largest limit.
	largest := 0
	for _, in := range intents {
		_, _, size := searchAnswer(t, cs, in.query, gateway.MaxSearchLimit)
		largest = max(largest, size)
		if size > gateway.MaxSearchAnswerBytes {
			t.Errorf("%q: answer of %d bytes, over %d", in.query, size, gateway.MaxSearchAnswerBytes)
		}
	}
	t.Logf("search mode tools/list: %d bytes; largest search_tools answer (limit %d): %d bytes",
		g.Tools().ListBytes(), gateway.MaxSearchLimit, largest)

	top1, top5, misses := rankIntents(t, cs)
	n := float64(len(intents))
	t.Logf("search relevance over %d intents: top-1 %d (%.0f%%), top-5 %d (%.0f%%); not first:\n%s",
		len(intents), top1, 100*float64(top1)/n, top5, 100*float64(top5)/n, strings.Join(misses, "\n"))
	if float64(top1)/n < minTop1 || float64(top5)/n < minTop5 {
		t.Errorf("top-1 %.2f, top-5 %.2f: under the floors %.2f and %.2f", float64(top1)/n, float64(top5)/n, minTop1, minTop5)
	}
}

// The estate benchmark (bench_test.go) reports the relevance beside its
// other figures.
func init() {
	searchRelevance = func(tb testing.TB) (float64, float64) {
		top1, top5, _ := rankIntents(tb, connect(tb, newEstateGateway(tb, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})))
		n := float64(len(intents))
		return 100 * float64(top1) / n, 100 * float64(top5) / n
	}
}

// rankIntents asks search_tools every intent and counts those with a
// right tool first and within the first five; misses describe the others.
func rankIntents(tb testing.TB, cs *sdk.ClientSession) (top1, top5 int, misses []string) {
	for _, in := range intents {
		got := searchNames(tb, cs, in.query, 5)
		rank := slices.IndexFunc(got, func(n string) bool { return slices.Contains(in.want, n) })
		switch {
		case rank == 0:
			top1++
			top5++
		case rank > 0:
			top5++
			misses = append(misses, fmt.Sprintf("  #%d %q: %v", rank+1, in.query, got))
		default:
			misses = append(misses, fmt.Sprintf("  miss %q want %v: %v", in.query, in.want, got))
		}
	}
	return top1, top5, misses
}

// connect serves g over Streamable HTTP and connects the official client.
func connect(t testing.TB, g *gateway.Gateway) *sdk.ClientSession {
	t.Helper()
	hs := httptest.NewServer(g.Handler())
	t.Cleanup(hs.Close)
	return testkit.Connect(t, hs.URL+"/mcp", "2025-11-25")
}

// searchNames returns the names search_tools answers query with.
func searchNames(t testing.TB, cs *sdk.ClientSession, query string, limit int) []string {
	t.Helper()
	names, _, _ := searchAnswer(t, cs, query, limit)
	return names
}

// searchAnswer calls search_tools and returns the names it answers with,
// whether the first comes with its input schema, and the size of the
// result as JSON (what the wire carries, give or take the envelope).
func searchAnswer(t testing.TB, cs *sdk.ClientSession, query string, limit int) (names []string, firstSchema bool, size int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: gateway.SearchToolsName, Arguments: map[string]any{"query": query, "limit": limit}})
	if err != nil || res.IsError {
		t.Fatalf("%q: %v %+v", query, err, res)
	}
	wire, _ := json.Marshal(res)
	var answer struct {
		Tools []struct {
			Name        string
			InputSchema json.RawMessage
		}
	}
	// The text block: what every client shows the model, and the copy
	// that always carries an exact match's schema.
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &answer); err != nil {
		t.Fatal(err)
	}
	for _, tl := range answer.Tools {
		names = append(names, tl.Name)
	}
	return names, len(answer.Tools) > 0 && answer.Tools[0].InputSchema != nil, len(wire)
}

// nonce is a word no tool has, different for every i, which makes a
// query new to the answer cache without changing what it matches.
func nonce(i int) string {
	b := []byte("zz")
	for ; i > 0; i /= 26 {
		b = append(b, byte('a'+i%26))
	}
	return string(b)
}

// BenchmarkSearchTools is one search_tools call on the estate as the
// gateway serves it (ranking 1,450 tools and encoding the answer), without
// the transport; each query is new, so the answer cache never serves it.
func BenchmarkSearchTools(b *testing.B) {
	g := newEstateGateway(b, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		args, _ := json.Marshal(map[string]any{"query": intents[i%len(intents)].query + " " + nonce(i)})
		res, err := g.CallTool(context.Background(), &mcp.CallToolRequest{Name: gateway.SearchToolsName, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
		i++
	}
}
