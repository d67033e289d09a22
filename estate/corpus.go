package estate

import (
	"slices"

	// Each import registers the published descriptors of one API of the
	// corpus (docs/catalog.md says why each was chosen).
	_ "github.com/authzed/authzed-go/proto/authzed/api/v1"
	_ "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	_ "github.com/cilium/cilium/api/v1/observer"
	_ "github.com/containerd/containerd/api/services/containers/v1"
	_ "github.com/containerd/containerd/api/services/content/v1"
	_ "github.com/containerd/containerd/api/services/diff/v1"
	_ "github.com/containerd/containerd/api/services/events/v1"
	_ "github.com/containerd/containerd/api/services/images/v1"
	_ "github.com/containerd/containerd/api/services/introspection/v1"
	_ "github.com/containerd/containerd/api/services/leases/v1"
	_ "github.com/containerd/containerd/api/services/namespaces/v1"
	_ "github.com/containerd/containerd/api/services/sandbox/v1"
	_ "github.com/containerd/containerd/api/services/snapshots/v1"
	_ "github.com/containerd/containerd/api/services/tasks/v1"
	_ "github.com/containerd/containerd/api/services/transfer/v1"
	_ "github.com/containerd/containerd/api/services/version/v1"
	_ "github.com/dapr/dapr/pkg/proto/runtime/v1"
	_ "github.com/livekit/protocol/livekit"
	_ "github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	_ "github.com/openfga/api/proto/openfga/v1"
	_ "github.com/qdrant/go-client/qdrant"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_Coordination_V1"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_Operation_V1"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_Query_V1"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_RateLimiter_V1"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_Scheme_V1"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_Table_V1"
	_ "github.com/ydb-platform/ydb-go-genproto/Ydb_Topic_V1"
	_ "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/protobuf/reflect/protoreflect"
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CorpusAPI is one API of the corpus: a real API from a domain the
// catalog's inference was not built against (neither Google Cloud nor
// Temporal), with the descriptors its own Go module publishes.
type CorpusAPI struct {
	// ID names the API in the request sets (testdata/corpus).
	ID string
	// Domain is what the API is for.
	Domain string
	// Module is the Go module that publishes its descriptors.
	Module string
	// Services are the services the corpus serves, by full name: the
	// API's public surface, without what only its own components call.
	Services []protoreflect.FullName
}

// Corpus is twelve real APIs of nine domains, to build and test the
// catalog's inference (descriptions, hints, search) on APIs it was not
// tuned for. Serve them with [Options.Services] and [CorpusServices].
var Corpus = []CorpusAPI{
	{ID: "etcd", Domain: "key-value store", Module: "go.etcd.io/etcd/api/v3", Services: []protoreflect.FullName{
		"etcdserverpb.Auth", "etcdserverpb.Cluster", "etcdserverpb.KV", "etcdserverpb.Lease",
		"etcdserverpb.Maintenance", "etcdserverpb.Watch"}},
	{ID: "containerd", Domain: "container runtime", Module: "github.com/containerd/containerd/api", Services: []protoreflect.FullName{
		"containerd.services.containers.v1.Containers", "containerd.services.content.v1.Content",
		"containerd.services.diff.v1.Diff", "containerd.services.events.v1.Events",
		"containerd.services.images.v1.Images", "containerd.services.introspection.v1.Introspection",
		"containerd.services.leases.v1.Leases", "containerd.services.namespaces.v1.Namespaces",
		"containerd.services.sandbox.v1.Controller", "containerd.services.sandbox.v1.Store",
		"containerd.services.snapshots.v1.Snapshots", "containerd.services.tasks.v1.Tasks",
		"containerd.services.transfer.v1.Transfer", "containerd.services.version.v1.Version"}},
	{ID: "cri", Domain: "container runtime (Kubernetes node)", Module: "k8s.io/cri-api", Services: []protoreflect.FullName{
		"runtime.v1.ImageService", "runtime.v1.RuntimeService"}},
	{ID: "milvus", Domain: "vector database", Module: "github.com/milvus-io/milvus-proto/go-api/v2", Services: []protoreflect.FullName{
		"milvus.proto.milvus.MilvusService"}},
	{ID: "qdrant", Domain: "vector database", Module: "github.com/qdrant/go-client", Services: []protoreflect.FullName{
		"qdrant.Collections", "qdrant.Points", "qdrant.Qdrant", "qdrant.Snapshots"}},
	{ID: "spicedb", Domain: "authorization", Module: "github.com/authzed/authzed-go", Services: []protoreflect.FullName{
		"authzed.api.v1.ExperimentalService", "authzed.api.v1.PermissionsService",
		"authzed.api.v1.SchemaService", "authzed.api.v1.WatchService"}},
	{ID: "openfga", Domain: "authorization", Module: "github.com/openfga/api/proto", Services: []protoreflect.FullName{
		"openfga.v1.OpenFGAService"}},
	{ID: "reapi", Domain: "build execution and caching", Module: "github.com/bazelbuild/remote-apis", Services: []protoreflect.FullName{
		"build.bazel.remote.execution.v2.ActionCache", "build.bazel.remote.execution.v2.Capabilities",
		"build.bazel.remote.execution.v2.ContentAddressableStorage", "build.bazel.remote.execution.v2.Execution"}},
	{ID: "dapr", Domain: "application runtime", Module: "github.com/dapr/dapr", Services: []protoreflect.FullName{
		"dapr.proto.runtime.v1.Dapr"}},
	{ID: "livekit", Domain: "real-time media", Module: "github.com/livekit/protocol", Services: []protoreflect.FullName{
		"livekit.AgentDispatchService", "livekit.Egress", "livekit.Ingress", "livekit.RoomService", "livekit.SIP"}},
	{ID: "ydb", Domain: "SQL database", Module: "github.com/ydb-platform/ydb-go-genproto", Services: []protoreflect.FullName{
		"Ydb.Coordination.V1.CoordinationService", "Ydb.Operation.V1.OperationService",
		"Ydb.Query.V1.QueryService", "Ydb.RateLimiter.V1.RateLimiterService",
		"Ydb.Scheme.V1.SchemeService", "Ydb.Table.V1.TableService", "Ydb.Topic.V1.TopicService"}},
	{ID: "hubble", Domain: "network observability", Module: "github.com/cilium/cilium", Services: []protoreflect.FullName{
		"observer.Observer"}},
}

// CorpusServices are the services of every API of [Corpus], sorted.
func CorpusServices() []protoreflect.FullName {
	var all []protoreflect.FullName
	for _, a := range Corpus {
		all = append(all, a.Services...)
	}
	slices.Sort(all)
	return all
}
