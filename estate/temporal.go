package estate

import (
	// Each import registers the published descriptors of one Temporal API.
	_ "go.temporal.io/api/operatorservice/v1"
	_ "go.temporal.io/api/workflowservice/v1"
	_ "go.temporal.io/cloud-sdk/api/cloudservice/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TemporalServices are a second estate, of another domain and another
// API style than Google Cloud's: Temporal's workflow orchestration API
// (go.temporal.io/api: the server's WorkflowService and OperatorService)
// and its cloud operations API (go.temporal.io/cloud-sdk: CloudService),
// 233 methods whose names follow no AIP (StartWorkflowExecution,
// GetUsers for a list). Serve them with [Options.Services].
var TemporalServices = []protoreflect.FullName{
	"temporal.api.cloud.cloudservice.v1.CloudService",
	"temporal.api.operatorservice.v1.OperatorService",
	"temporal.api.workflowservice.v1.WorkflowService",
}

// NumTemporalMethods is the Temporal estate's size at the pinned module
// versions.
const NumTemporalMethods = 233
