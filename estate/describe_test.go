package estate_test

import (
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// TestEstateDescriptions: what the gateway writes for methods whose
// descriptors carry no comment, on the estates' real descriptors: the
// rows docs/catalog.md shows.
func TestEstateDescriptions(t *testing.T) {
	want := map[string]string{
		"Instances_Insert":                               "Creates an instance in a zone of a project. Requires: instanceResource, project, zone. Returns an operation to follow.",
		"Instances_SetMachineType":                       "Sets the machine type of an instance in a zone of a project. Requires: instance, instancesSetMachineTypeRequestResource, project, zone. Returns an operation to follow.",
		"Publisher_ListTopicSubscriptions":               "Lists the subscriptions in a topic of a project. Requires: topic. Returns: subscriptions, nextPageToken.",
		"DatasetService_CreateDataset":                   "Creates a dataset in a location of a project. Its operation's result, when done, is a dataset. Requires: parent, dataset.",
		"StorageControl_DeleteManagedFolder":             "Deletes a managed folder in a bucket of a project. Requires: name. Returns nothing.",
		"WorkflowService_RequestCancelWorkflowExecution": "Requests to cancel a workflow execution in a namespace. Requires: namespace, workflowExecution. Returns nothing.",
		"CloudService_GetUsers":                          "Lists the users. Takes: pageSize, pageToken, email, namespace. Returns: users (id, resourceVersion, spec, stateDeprecated, state and 4 more), nextPageToken.",
	}
	for _, g := range []*gateway.Gateway{
		newEstateGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}}),
		startGateway(t, temporalBackends(t), &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}}),
	} {
		for _, tl := range g.Tools().Tools() {
			w, ok := want[tl.Name]
			if !ok {
				continue
			}
			delete(want, tl.Name)
			// The description's first paragraph is the written one; the
			// notes on paging and long-running calls follow it.
			got, _, _ := strings.Cut(tl.Description, "\n\n")
			got = strings.TrimSpace(strings.Split(got, " This is a long-running operation")[0])
			if got != w {
				t.Errorf("%s:\n got %q\nwant %q", tl.Name, got, w)
			}
		}
	}
	for name := range want {
		t.Errorf("%s: no such tool on the estates", name)
	}
}
