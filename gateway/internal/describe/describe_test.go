package describe

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	_ "google.golang.org/genproto/googleapis/api/annotations" // google.api options for prototext
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// file compiles a FileDescriptorProto written in prototext.
func file(t *testing.T, text string) protoreflect.FileDescriptor {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(text), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestVerbTable: every row of the table gives the hints it documents,
// through a method whose name starts with the verb and that declares
// nothing else; no verb is in two rows; the default applies to a verb the
// table does not know.
func TestVerbTable(t *testing.T) {
	want := map[Effect]Hints{
		Reads:    {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true},
		Adds:     {ReadOnly: false, Destructive: false, OpenWorld: true},
		Changes:  {ReadOnly: false, Destructive: true, OpenWorld: true},
		Removes:  {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true},
		Controls: {ReadOnly: false, Destructive: true, OpenWorld: true},
		Starts:   {ReadOnly: false, Destructive: false, OpenWorld: true},
		Unknown:  {ReadOnly: false, Destructive: true, Idempotent: false, OpenWorld: true},
	}
	// Idempotency within a row depends on the verb (verbs.go): a request
	// that names nothing makes no create idempotent.
	idempotent := func(e Effect, v string) bool {
		switch e {
		case Reads, Removes:
			return true
		case Adds, Starts:
			return idempotentAdds[v]
		case Changes:
			return !relativeVerbs[v]
		case Controls:
			return stateVerbs[v]
		}
		return false
	}
	seen := map[string]Effect{}
	var methods strings.Builder
	var rows []string
	for _, row := range verbTable {
		for _, v := range row.verbs {
			if prev, dup := seen[v]; dup {
				t.Errorf("verb %q is in the %s row and the %s row", v, prev, row.effect)
			}
			seen[v] = row.effect
			if grammarVerbs[v] {
				t.Errorf("verb %q is in the table and in grammarVerbs", v)
			}
			name := strings.ToUpper(v[:1]) + v[1:] + "Thing"
			fmt.Fprintf(&methods, "method { name: %q input_type: \".verbs.v1.M\" output_type: \".verbs.v1.M\" }\n", name)
			rows = append(rows, name)
		}
	}
	methods.WriteString(`method { name: "FrobnicateThing" input_type: ".verbs.v1.M" output_type: ".verbs.v1.M" }`)
	fd := file(t, `name: "verbs.proto" package: "verbs.v1" syntax: "proto3" message_type { name: "M" } service { name: "S" `+methods.String()+` }`)
	ms := fd.Services().Get(0).Methods()
	for i := range ms.Len() {
		a := Analyze(ms.Get(i), nil)
		effect := Unknown
		if i < len(rows) {
			effect = seen[strings.ToLower(strings.TrimSuffix(rows[i], "Thing"))]
		}
		if a.Effect != effect {
			t.Errorf("%s: effect %s, want %s", ms.Get(i).Name(), a.Effect, effect)
		}
		h, src := a.Hints()
		w := want[effect]
		if effect != Unknown {
			w.Idempotent = idempotent(effect, a.Verb)
		}
		if h != w {
			t.Errorf("%s (%s): hints %+v, want %+v", ms.Get(i).Name(), effect, h, w)
		}
		wantSrc := FromVerbTable
		if effect == Unknown {
			wantSrc = FromDefault
		}
		if src.ReadOnly != wantSrc || src.Destructive != wantSrc || src.Idempotent != wantSrc || src.OpenWorld != FromDefault {
			t.Errorf("%s: sources %+v, want %s", ms.Get(i).Name(), src, wantSrc)
		}
	}
}

// TestHintPrecedence: each hint comes from the strongest source that
// speaks to it: idempotency_level, then the HTTP verb, then the verb
// table, then the default.
func TestHintPrecedence(t *testing.T) {
	fd := file(t, `name: "prec.proto" package: "prec.v1" syntax: "proto3"
		dependency: "google/api/annotations.proto"
		message_type { name: "M" }
		service { name: "S"
			method { name: "DeleteThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { idempotency_level: NO_SIDE_EFFECTS } }
			method { name: "StopThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { idempotency_level: IDEMPOTENT } }
			method { name: "CreateThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { [google.api.http] { put: "/v1/things/{name}" body: "*" } } }
			method { name: "ComputeThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { [google.api.http] { post: "/v1/things:compute" body: "*" } } }
			method { name: "RestoreThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { [google.api.http] { get: "/v1/{name=things/*}:restore" } } }
			method { name: "ZapThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { [google.api.http] { get: "/v1/{name=things/*}:zap" } } }
			method { name: "FrobThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { [google.api.http] { delete: "/v1/{name=things/*}" } } }
			method { name: "SyncThing" input_type: ".prec.v1.M" output_type: ".prec.v1.M"
				options { [google.api.http] { patch: "/v1/{thing.name=things/*}" body: "thing" } } }
		}`)
	for _, tc := range []struct {
		method string
		want   Hints
		src    HintSources
	}{
		// NO_SIDE_EFFECTS wins over the verb Delete.
		{"DeleteThing", Hints{true, false, true, true}, HintSources{FromIdempotencyLevel, FromIdempotencyLevel, FromIdempotencyLevel, FromDefault}},
		// IDEMPOTENT: not read-only and idempotent; Stop's row says destructive.
		{"StopThing", Hints{false, true, true, true}, HintSources{FromIdempotencyLevel, FromVerbTable, FromIdempotencyLevel, FromDefault}},
		// PUT: idempotent; Create's row says the rest.
		{"CreateThing", Hints{false, false, true, true}, HintSources{FromHTTPRule, FromVerbTable, FromHTTPRule, FromDefault}},
		// POST says nothing; Compute reads.
		{"ComputeThing", Hints{true, false, true, true}, HintSources{FromVerbTable, FromVerbTable, FromVerbTable, FromDefault}},
		// A GET whose verb writes (Restore) is idempotent, not read-only.
		{"RestoreThing", Hints{false, true, true, true}, HintSources{FromVerbTable, FromVerbTable, FromHTTPRule, FromDefault}},
		// A GET of a verb the table does not know is read-only.
		{"ZapThing", Hints{true, false, true, true}, HintSources{FromHTTPRule, FromHTTPRule, FromHTTPRule, FromDefault}},
		// DELETE on a verb the table does not know.
		{"FrobThing", Hints{false, true, true, true}, HintSources{FromHTTPRule, FromHTTPRule, FromHTTPRule, FromDefault}},
		// PATCH: not read-only; Sync changes.
		{"SyncThing", Hints{false, true, true, true}, HintSources{FromHTTPRule, FromVerbTable, FromVerbTable, FromDefault}},
	} {
		a := Analyze(fd.Services().Get(0).Methods().ByName(protoreflect.Name(tc.method)), nil)
		if h, src := a.Hints(); h != tc.want || src != tc.src {
			t.Errorf("%s: %+v from %+v, want %+v from %+v", tc.method, h, src, tc.want, tc.src)
		}
	}
}

// TestJoinedVerbs: a name that joins a read to a write, or writes after
// reading, gets the conservative default; a noun that is also a verb
// (GetSnapshot) does not.
func TestJoinedVerbs(t *testing.T) {
	fd := file(t, `name: "goc.proto" package: "goc.v1" syntax: "proto3" message_type { name: "M" }
		service { name: "S"
			method { name: "GetOrCreateThing" input_type: ".goc.v1.M" output_type: ".goc.v1.M" }
			method { name: "GetAndIncrement" input_type: ".goc.v1.M" output_type: ".goc.v1.M" }
			method { name: "ReadModifyWriteRow" input_type: ".goc.v1.M" output_type: ".goc.v1.M" }
			method { name: "FeatureViewDirectWrite" input_type: ".goc.v1.M" output_type: ".goc.v1.M" }
			method { name: "GetSnapshot" input_type: ".goc.v1.M" output_type: ".goc.v1.M" }
			method { name: "ListBackupOperations" input_type: ".goc.v1.M" output_type: ".goc.v1.M" }
		}`)
	ms := fd.Services().Get(0).Methods()
	for i := range ms.Len() {
		h, _ := Analyze(ms.Get(i), nil).Hints()
		wantRead := ms.Get(i).Name() == "GetSnapshot" || ms.Get(i).Name() == "ListBackupOperations"
		if wantRead && (!h.ReadOnly || h.Destructive) || !wantRead && (h.ReadOnly || !h.Destructive || h.Idempotent) {
			t.Errorf("%s: %+v, want read-only %v (else the conservative default)", ms.Get(i).Name(), h, wantRead)
		}
	}
}

// apiFixture has the shapes real APIs use: AIP resources with patterns and
// references (without an HTTP rule too), Compute-style paths with a
// service per resource, custom verbs, batch modifiers, long-running
// methods, and names that start with no verb.
const apiFixture = `name: "shapes.proto" package: "acme.cloud.shapes.v1" syntax: "proto3"
	dependency: "google/api/annotations.proto"
	dependency: "google/api/field_behavior.proto"
	dependency: "google/api/resource.proto"
	message_type { name: "Topic"
		field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "name" }
		options { [google.api.resource] { type: "shapes.acme.com/Topic" pattern: "projects/{project}/topics/{topic}" } } }
	message_type { name: "ManagedFolder"
		field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "name" }
		options { [google.api.resource] { type: "shapes.acme.com/ManagedFolder" pattern: "projects/{project}/buckets/{bucket}/managedFolders/{managed_folder=**}" } } }
	message_type { name: "GetTopicRequest"
		field { name: "topic" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "topic"
			options { [google.api.field_behavior]: REQUIRED [google.api.resource_reference] { type: "shapes.acme.com/Topic" } } } }
	message_type { name: "ListTopicsRequest"
		field { name: "project" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "project"
			options { [google.api.field_behavior]: REQUIRED } }
		field { name: "page_size" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "pageSize" }
		field { name: "page_token" number: 3 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "pageToken" } }
	message_type { name: "DeleteManagedFolderRequest"
		field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "name"
			options { [google.api.field_behavior]: REQUIRED [google.api.resource_reference] { type: "shapes.acme.com/ManagedFolder" } } } }
	message_type { name: "InstanceRequest"
		field { name: "project" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "project" }
		field { name: "zone" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "zone" }
		field { name: "instance" number: 3 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "instance" } }
	message_type { name: "Operation" }
	service { name: "Publisher"
		method { name: "GetTopic" input_type: ".acme.cloud.shapes.v1.GetTopicRequest" output_type: ".acme.cloud.shapes.v1.Topic"
			options { [google.api.http] { get: "/v1/{topic=projects/*/topics/*}" } } }
		method { name: "ListTopics" input_type: ".acme.cloud.shapes.v1.ListTopicsRequest" output_type: ".acme.cloud.shapes.v1.Topic"
			options { [google.api.http] { get: "/v1/{project=projects/*}/topics" } } }
		method { name: "ListTopicSubscriptions" input_type: ".acme.cloud.shapes.v1.GetTopicRequest" output_type: ".acme.cloud.shapes.v1.Topic"
			options { [google.api.http] { get: "/v1/{topic=projects/*/topics/*}/subscriptions" } } }
		method { name: "BatchCreateTopics" input_type: ".acme.cloud.shapes.v1.ListTopicsRequest" output_type: ".acme.cloud.shapes.v1.Topic"
			options { [google.api.http] { post: "/v1/{project=projects/*}/topics:batchCreate" body: "*" } } }
	}
	service { name: "StorageControl"
		method { name: "DeleteManagedFolder" input_type: ".acme.cloud.shapes.v1.DeleteManagedFolderRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
		method { name: "SoftDeleteManagedFolder" input_type: ".acme.cloud.shapes.v1.DeleteManagedFolderRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
		method { name: "CalendarModeAdvice" input_type: ".acme.cloud.shapes.v1.DeleteManagedFolderRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
		method { name: "StreamDirectPredict" input_type: ".acme.cloud.shapes.v1.Topic" output_type: ".acme.cloud.shapes.v1.Topic" }
	}
	service { name: "Instances"
		method { name: "Insert" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Operation"
			options { [google.api.http] { post: "/compute/v1/projects/{project}/zones/{zone}/instances" body: "*" } } }
		method { name: "SetMachineType" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Operation"
			options { [google.api.http] { post: "/compute/v1/projects/{project}/zones/{zone}/instances/{instance}/setMachineType" body: "*" } } }
		method { name: "AttachDisk" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Operation"
			options { [google.api.http] { post: "/compute/v1/projects/{project}/zones/{zone}/instances/{instance}/attachDisk" body: "*" } } }
		method { name: "AggregatedList" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Operation"
			options { [google.api.http] { get: "/compute/v1/projects/{project}/aggregated/instances" } } }
	}
	service { name: "WorkflowService"
		method { name: "RequestCancelWorkflowExecution" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic"
			options { [google.api.http] { post: "/namespaces/{project}/workflows/{instance}/cancel" body: "*" } } }
		method { name: "SignalWorkflowExecution" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic"
			options { [google.api.http] { post: "/namespaces/{project}/workflows/{instance}/signal/{zone}" body: "*" } } }
		method { name: "GetUsers" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
		method { name: "GetSettings" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
		method { name: "WaitOperation" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
	}
	service { name: "WidgetService"
		method { name: "Get" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
		method { name: "Check" input_type: ".acme.cloud.shapes.v1.InstanceRequest" output_type: ".acme.cloud.shapes.v1.Topic" }
	}`

// TestDescriptions: the sentence, notes, title and kind written for each
// shape.
func TestDescriptions(t *testing.T) {
	fd := file(t, apiFixture)
	files := new(protoregistry.Files)
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	opts := &Options{Resources: NewResources(files)}
	for _, tc := range []struct {
		method, desc, title string
		kind                Kind
		target              string
	}{
		{"acme.cloud.shapes.v1.Publisher.GetTopic", "Gets a topic in a project. Requires: topic. Returns: name.", "Get topic (Acme Cloud Shapes v1)", Get, "topic"},
		{"acme.cloud.shapes.v1.Publisher.ListTopics", "Lists the topics in a project. Requires: project. Returns: name.", "List topics (Acme Cloud Shapes v1)", List, "topics"},
		{"acme.cloud.shapes.v1.Publisher.ListTopicSubscriptions", "Lists the subscriptions in a topic of a project. Requires: topic. Returns: name.", "List subscriptions (Acme Cloud Shapes v1)", List, "topic subscriptions"},
		{"acme.cloud.shapes.v1.Publisher.BatchCreateTopics", "Creates several topics in a project, in one call. Requires: project. Returns: name.", "Batch create topics (Acme Cloud Shapes v1)", Create, "topics"},
		// No HTTP rule: the resource pattern of the referenced type says where.
		{"acme.cloud.shapes.v1.StorageControl.DeleteManagedFolder", "Deletes a managed folder in a bucket of a project. Requires: name. Returns: name.", "Delete managed folder (Acme Cloud Shapes v1)", Delete, "managed folder"},
		// Words before the verb qualify it; a name that is a noun alone,
		// whose request only selects, returns that noun.
		{"acme.cloud.shapes.v1.StorageControl.SoftDeleteManagedFolder", "Deletes a managed folder in a bucket of a project (soft). Requires: name. Returns: name.", "Soft delete managed folder (Acme Cloud Shapes v1)", Delete, "managed folder"},
		{"acme.cloud.shapes.v1.StorageControl.CalendarModeAdvice", "Returns the calendar mode advice of a managed folder in a bucket of a project. Requires: name. Returns: name.", "Calendar mode advice (Acme Cloud Shapes v1)", Get, "calendar mode advice"},
		// Nothing but the service names what it acts on.
		{"acme.cloud.shapes.v1.StorageControl.StreamDirectPredict", "Predicts with the storage control service, as a stream (direct). Takes: name. Returns: name.", "Stream direct predict (Acme Cloud Shapes v1)", Custom, "storage control"},
		// Compute: the service names the resource, the path where.
		{"acme.cloud.shapes.v1.Instances.Insert", "Creates an instance in a zone of a project. Requires: project, zone. Returns an operation to follow.", "Create instance (Acme Cloud Shapes v1)", Create, "instance"},
		{"acme.cloud.shapes.v1.Instances.SetMachineType", "Sets the machine type of an instance in a zone of a project. Requires: project, zone, instance. Returns an operation to follow.", "Set machine type of instance (Acme Cloud Shapes v1)", Update, "machine type"},
		{"acme.cloud.shapes.v1.Instances.AttachDisk", "Attaches a disk to an instance in a zone of a project. Requires: project, zone, instance. Returns an operation to follow.", "Attach disk to instance (Acme Cloud Shapes v1)", Custom, "disk"},
		{"acme.cloud.shapes.v1.Instances.AggregatedList", "Lists the instances in every location of a project. Requires: project. Returns an operation to follow.", "List instances (Acme Cloud Shapes v1)", List, "instance"},
		// Names that follow no AIP.
		{"acme.cloud.shapes.v1.WorkflowService.RequestCancelWorkflowExecution", "Requests to cancel a workflow execution in a namespace. Requires: project, instance. Returns: name.", "Request cancel workflow execution (Acme Cloud Shapes v1)", Custom, "cancel workflow execution"},
		{"acme.cloud.shapes.v1.WorkflowService.SignalWorkflowExecution", "Signals a workflow execution in a namespace. Requires: project, instance, zone. Returns: name.", "Signal workflow execution (Acme Cloud Shapes v1)", Custom, "workflow execution"},
		{"acme.cloud.shapes.v1.WorkflowService.GetUsers", "Lists the users. Takes: project, zone, instance. Returns: name.", "List users (Acme Cloud Shapes v1)", List, "users"},
		{"acme.cloud.shapes.v1.WorkflowService.GetSettings", "Gets the settings. Takes: project, zone, instance. Returns: name.", "Get settings (Acme Cloud Shapes v1)", Get, "settings"},
		{"acme.cloud.shapes.v1.WorkflowService.WaitOperation", "Waits for an operation. Takes: project, zone, instance. Returns: name.", "Wait for operation (Acme Cloud Shapes v1)", Custom, "operation"},
		{"acme.cloud.shapes.v1.WidgetService.Get", "Gets a widget. Takes: project, zone, instance. Returns: name.", "Get widget (Acme Cloud Shapes v1)", Get, "widget"},
		{"acme.cloud.shapes.v1.WidgetService.Check", "Checks with the widget service. Takes: project, zone, instance. Returns: name.", "Check (Acme Cloud Shapes v1)", Custom, "widget"},
	} {
		d, err := files.FindDescriptorByName(protoreflect.FullName(tc.method))
		if err != nil {
			t.Fatal(err)
		}
		a := Analyze(d.(protoreflect.MethodDescriptor), opts)
		if got := a.Description(); got != tc.desc {
			t.Errorf("%s description:\n got %q\nwant %q", tc.method, got, tc.desc)
		}
		if got := a.Title(); got != tc.title {
			t.Errorf("%s title: %q, want %q", tc.method, got, tc.title)
		}
		if a.Kind != tc.kind {
			t.Errorf("%s kind: %s, want %s", tc.method, a.Kind, tc.kind)
		}
		if got := strings.Join(a.Target(), " "); got != tc.target {
			t.Errorf("%s target: %q, want %q", tc.method, got, tc.target)
		}
	}
}

// TestLongRunningResult: a long-running method says what its operation
// holds when done.
func TestLongRunningResult(t *testing.T) {
	fd := file(t, apiFixture)
	m := fd.Services().ByName("Instances").Methods().ByName("Insert")
	a := Analyze(m, &Options{LongRunningResult: "acme.cloud.shapes.v1.Instance"})
	if got := a.Description(); !strings.Contains(got, "Its operation's result, when done, is an instance.") {
		t.Errorf("description %q", got)
	}
	a = Analyze(m, &Options{LongRunningResult: "google.protobuf.Empty"})
	if got := a.Description(); strings.Contains(got, "result") {
		t.Errorf("an operation with an empty result: %q", got)
	}
}

// TestWords: the English the sentences rest on.
func TestWords(t *testing.T) {
	for _, tc := range [][2]string{{"instances", "instance"}, {"policies", "policy"}, {"addresses", "address"}, {"indexes", "index"},
		{"statuses", "status"}, {"caches", "cache"}, {"data", "data"}, {"status", "status"}, {"access", "access"}, {"analysis", "analysis"}} {
		if got := singular(tc[0]); got != tc[1] {
			t.Errorf("singular(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	for _, tc := range [][2]string{{"policy", "policies"}, {"address", "addresses"}, {"key", "keys"}, {"data", "data"}, {"box", "boxes"}} {
		if got := plural(tc[0]); got != tc[1] {
			t.Errorf("plural(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	for _, tc := range [][2]string{{"stop", "stops"}, {"search", "searches"}, {"apply", "applies"}, {"deploy", "deploys"}, {"do", "does"}} {
		if got := thirdPerson(tc[0]); got != tc[1] {
			t.Errorf("thirdPerson(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	for _, tc := range [][2]string{{"instance", "an"}, {"user", "a"}, {"IAM policy", "an"}, {"SSL certificate", "an"}, {"VM", "a"}, {"hour", "an"}, {"topic", "a"}} {
		if got := article(tc[0]); got != tc[1] {
			t.Errorf("article(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	if got := splitWords("GetHTTPRouteV1beta2"); !slices.Equal(got, []string{"get", "http", "route", "v1beta2"}) {
		t.Errorf("splitWords: %q", got)
	}
}

// TestVerbTableDocumented: docs/catalog.md's verb table lists exactly the
// code's rows: their hints and their verbs.
func TestVerbTableDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/catalog.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "<!-- verb table:")
	end := strings.Index(doc, "<!-- end of verb table -->")
	if start < 0 || end < start {
		t.Fatal("docs/catalog.md has no verb table between its markers")
	}
	got := map[string]string{}
	for line := range strings.Lines(doc[start:end]) {
		cols := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		if len(cols) == 5 && cols[0] != "row" && !strings.HasPrefix(cols[0], "---") {
			got[cols[0]] = strings.Join(cols[1:], " | ")
		}
	}
	for _, row := range verbTable {
		h, _ := (&Method{Effect: row.effect}).Hints()
		idem := ""
		for _, v := range row.verbs {
			hv, _ := (&Method{Effect: row.effect, Verb: v}).Hints()
			switch s := fmt.Sprint(hv.Idempotent); {
			case idem == "":
				idem = s
			case idem != s:
				idem = "by verb"
			}
		}
		want := fmt.Sprintf("%t | %t | %s | %s", h.ReadOnly, h.Destructive, idem, strings.Join(row.verbs, ", "))
		if got[row.effect.String()] != want {
			t.Errorf("docs/catalog.md's %s row:\n%s\nthe code's:\n%s", row.effect, got[row.effect.String()], want)
		}
		delete(got, row.effect.String())
	}
	for r := range got {
		t.Errorf("docs/catalog.md lists a row %q the code does not have", r)
	}
}
