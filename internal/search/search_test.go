package search_test

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"ZooService_GetAnimal", []string{"zoo", "service", "get", "animal"}},
		{"GetHTTPRoute", []string{"get", "http", "route"}},
		{"google.cloud.compute.v1.Instances/Insert", []string{"google", "cloud", "compute", "v", "1", "instances", "insert"}},
		{"/v1/{name=projects/*/topics/*}:publish", []string{"v", "1", "name", "projects", "topics", "publish"}},
		{"page_token", []string{"page", "token"}},
		{"v1beta2", []string{"v", "1", "beta", "2"}},
		{"IPv6Address", []string{"i", "pv", "6", "address"}},
		{"  ", nil},
		{"Ünïcode wörds", []string{"ünïcode", "wörds"}},
	} {
		if got := search.Tokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStemMergesForms(t *testing.T) {
	for _, forms := range [][]string{
		{"instance", "instances"},
		{"delete", "deleted", "deletes", "deleting"},
		{"create", "created", "creating", "creates"},
		{"policy", "policies"},
		{"address", "addresses"},
		{"database", "databases"},
		{"run", "running"},
		{"set", "sets"},
		{"list", "lists", "listing"},
		{"status", "statuses"},
		{"index", "indexes", "indexed"},
		{"predict", "predicts", "prediction", "predictions"},
		{"tune", "tuning"},
		{"embedding", "embeddings"},
		{"route", "routing", "routes"},
	} {
		want := search.Stem(forms[0])
		for _, f := range forms[1:] {
			if got := search.Stem(f); got != want {
				t.Errorf("Stem(%q) = %q, want %q (as Stem(%q))", f, got, want, forms[0])
			}
		}
	}
	if search.Stem("settings") == search.Stem("set") {
		t.Error("the settings of a thing stem as the verb set")
	}
	for _, keep := range [][2]string{{"status", "stat"}, {"string", "str"}, {"access", "acces"}, {"address", "addres"}} {
		if got := search.Stem(keep[0]); got == keep[1] {
			t.Errorf("Stem(%q) = %q, should not have been cut", keep[0], got)
		}
	}
}

// corpus is a small API written as a gateway would feed it: name, service,
// description, request fields.
var corpus = []struct{ name, service, desc, fields string }{
	{"ZooService_GetAnimal", "zoo.v1.ZooService", "Returns one animal by its id.", "id"},
	{"ZooService_ListAnimals", "zoo.v1.ZooService", "Lists the animals of an enclosure, a page at a time.", "enclosure page_size page_token"},
	{"ZooService_CreateAnimal", "zoo.v1.ZooService", "Admits a new animal to the zoo.", "animal name species"},
	{"ZooService_DeleteAnimal", "zoo.v1.ZooService", "Removes an animal that left the zoo.", "id"},
	{"ZooService_UpdateAnimal", "zoo.v1.ZooService", "Changes an animal's record.", "animal update_mask"},
	{"Publisher_CreateTopic", "google.pubsub.v1.Publisher", "Creates the given topic with the given name.", "name labels"},
	{"Publisher_DeleteTopic", "google.pubsub.v1.Publisher", "Deletes the topic with the given name.", "topic"},
	{"Publisher_ListTopics", "google.pubsub.v1.Publisher", "Lists matching topics.", "project page_size page_token"},
	{"Publisher_Publish", "google.pubsub.v1.Publisher", "Adds one or more messages to the topic.", "topic messages"},
	{"Subscriber_CreateSubscription", "google.pubsub.v1.Subscriber", "Creates a subscription to a given topic.", "name topic push_config"},
	{"Instances_Start", "google.cloud.compute.v1.Instances", "Starts an instance that was stopped.", "instance project zone"},
	{"Instances_Stop", "google.cloud.compute.v1.Instances", "Stops a running instance.", "instance project zone"},
	{"Instances_Insert", "google.cloud.compute.v1.Instances", "Creates an instance resource in the specified project.", "instance_resource project zone"},
}

func newIndex() *search.Index {
	docs := make([]search.Document, len(corpus))
	for i, c := range corpus {
		docs[i] = search.Document{Key: c.name, Fields: []search.Field{
			{Text: c.name, Weight: 3},
			{Text: c.service, Weight: 1.5},
			{Text: c.desc, Weight: 1},
			{Text: c.fields, Weight: 0.5},
		}}
	}
	return search.New(docs)
}

func top(ix *search.Index, q string, n int) []string {
	var names []string
	for _, h := range ix.Search(q, n) {
		names = append(names, corpus[h.Doc].name)
	}
	return names
}

func TestSearchRanksIntents(t *testing.T) {
	ix := newIndex()
	for _, tc := range []struct{ query, want string }{
		{"remove the topic", "Publisher_DeleteTopic"},                       // synonym of delete
		{"add a subscription to my topic", "Subscriber_CreateSubscription"}, // synonym of create
		{"show all topics", "Publisher_ListTopics"},                         // list group
		{"fetch an animal", "ZooService_GetAnimal"},                         // get group
		{"modify an animal", "ZooService_UpdateAnimal"},                     // update group
		{"launch an instance", "Instances_Start"},                           // start group
		{"create a new VM instance", "Instances_Insert"},                    // insert is create
		{"send messages to a topic", "Publisher_Publish"},                   // description and fields
		{"ZooService_DeleteAnimal", "ZooService_DeleteAnimal"},              // exact name
		{"zooservice_deleteanimal", "ZooService_DeleteAnimal"},              // exact name, any case
		{"animals in an enclosure", "ZooService_ListAnimals"},               // description and fields
	} {
		got := top(ix, tc.query, 3)
		if len(got) == 0 || got[0] != tc.want {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, got, tc.want)
		}
	}
}

func TestSearchOwnVerbBeatsSynonym(t *testing.T) {
	// "create topic" matches CreateTopic by its own verb and Publish by
	// the synonym "add" in its description: the own verb ranks first.
	got := top(newIndex(), "create topic", 5)
	if len(got) < 2 || got[0] != "Publisher_CreateTopic" {
		t.Fatalf("create topic: %v", got)
	}
}

func TestSearchLimitAndNoMatch(t *testing.T) {
	ix := newIndex()
	if got := ix.Search("animal", 2); len(got) != 2 {
		t.Errorf("limit 2 gave %d hits", len(got))
	}
	if got := ix.Search("animal", 0); got != nil {
		t.Errorf("limit 0 gave %v", got)
	}
	if got := ix.Search("the of and", 5); len(got) != 0 {
		t.Errorf("a query of stopwords matched %v", got)
	}
	if got := ix.Search("xylophone", 5); len(got) != 0 {
		t.Errorf("a word no document has matched %v", got)
	}
	if got := search.New(nil).Search("anything", 5); got != nil {
		t.Errorf("empty index answered %v", got)
	}
}

// TestSearchActionAndSynonymWeights: a document whose action is the
// query's verb (or a synonym) ranks above one that only mentions it, and a
// rare synonym is worth no more than the common word the query used.
func TestSearchActionAndSynonymWeights(t *testing.T) {
	docs := []search.Document{
		{Key: "Tensorboards_LookupRun", Action: "Lookup", Fields: []search.Field{{Text: "LookupRun", Weight: 3}}},
		{Key: "Runs_Get", Action: "Get", Fields: []search.Field{{Text: "GetRun", Weight: 3}}},
		{Key: "Disks_ListResize", Action: "List", Fields: []search.Field{{Text: "ListResizeRequests disk", Weight: 3}}},
		{Key: "Disks_Resize", Action: "Resize", Fields: []search.Field{{Text: "Resize disk", Weight: 3}}},
	}
	for range 20 { // make "get" common and "lookup" rare
		docs = append(docs, search.Document{Action: "Get", Fields: []search.Field{{Text: "Get other things", Weight: 3}}})
	}
	ix := search.New(docs)
	if h := ix.Search("get a run", 1); len(h) != 1 || h[0].Doc != 1 {
		t.Errorf("get a run: %v, want Runs_Get (the word used beats its rare synonym)", h)
	}
	if h := ix.Search("resize the disk", 1); len(h) != 1 || h[0].Doc != 3 {
		t.Errorf("resize a disk: %v, want Disks_Resize (the action)", h)
	}
}

// TestSearchJoinsAndTruncates: two query words the index holds as one
// term are joined ("back up" finds Backup), and an unknown word matches
// the indexed term it begins with at an English ending ("zonal" finds
// Zone), never at any letter: "alice" is not the "ali" of AliOSS.
func TestSearchJoinsAndTruncates(t *testing.T) {
	docs := []search.Document{
		{Key: "Backups_Create", Fields: []search.Field{{Text: "CreateBackup", Weight: 3}}},
		{Key: "Things_Back", Fields: []search.Field{{Text: "BackThings up", Weight: 3}}},
		{Key: "ZoneOperations_Wait", Fields: []search.Field{{Text: "Wait ZoneOperations", Weight: 3}}},
		{Key: "Operations_Wait", Fields: []search.Field{{Text: "Wait Operations", Weight: 3}}},
		{Key: "Egress_StartAliOSSUpload", Fields: []search.Field{{Text: "StartAliOSSUpload", Weight: 3}}},
		{Key: "Permissions_Check", Fields: []search.Field{{Text: "CheckPermission", Weight: 3}}},
	}
	ix := search.New(docs)
	if h := ix.Search("can alice check the permission", 1); len(h) != 1 || h[0].Doc != 5 {
		t.Errorf("alice: %v, want Permissions_Check", h)
	}
	if h := ix.Search("alice", 5); slices.ContainsFunc(h, func(x search.Hit) bool { return x.Doc == 4 }) {
		t.Errorf("alice: %v, a name read as the ali of AliOSS", h)
	}
	if h := ix.Search("back up", 1); len(h) != 1 || h[0].Doc != 0 {
		t.Errorf("back up: %v, want Backups_Create", h)
	}
	if h := ix.Search("wait for a zonal operation", 1); len(h) != 1 || h[0].Doc != 2 {
		t.Errorf("zonal: %v, want ZoneOperations_Wait", h)
	}
}

func TestSearchPrefix(t *testing.T) {
	got := top(newIndex(), "subscr", 1)
	if len(got) != 1 || got[0] != "Subscriber_CreateSubscription" {
		t.Errorf("prefix subscr: %v", got)
	}
}

func TestSearchDeterministic(t *testing.T) {
	ix := newIndex()
	first := ix.Search("zoo animal", 10)
	for range 20 {
		if got := ix.Search("zoo animal", 10); !slices.Equal(got, first) {
			t.Fatalf("second search differs: %v vs %v", got, first)
		}
	}
	for i := 1; i < len(first); i++ {
		if first[i].Score > first[i-1].Score {
			t.Fatalf("not sorted by score: %v", first)
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	ix := newIndex()
	b.ReportAllocs()
	for b.Loop() {
		ix.Search("remove the topic of a project", 5)
	}
}

// api is a small catalog of three APIs written as the gateway feeds it:
// a compute API with a service per resource, a messaging API, and a
// workflow API that follows no AIP, each document with its kind, target
// and group.
var api = []struct {
	name, kind, target, group string
	readOnly                  bool
	desc                      string
}{
	{"Instances_List", search.KindList, "instance", "compute", true, "Lists the instances in a zone of a project."},
	{"Instances_Get", search.KindGet, "instance", "compute", true, "Gets an instance in a zone of a project."},
	{"Instances_Insert", search.KindCreate, "instance", "compute", false, "Creates an instance in a zone of a project."},
	{"Instances_Delete", search.KindDelete, "instance", "compute", false, "Deletes an instance in a zone of a project."},
	{"Instances_Stop", "", "instance", "compute", false, "Stops an instance in a zone of a project."},
	{"Instances_SetLabels", search.KindUpdate, "labels", "compute", false, "Sets the labels of an instance in a zone of a project."},
	{"VmExtensionPolicies_List", search.KindList, "vm extension policy", "compute", true, "Lists the vm extension policies in a zone of a project."},
	{"Disks_List", search.KindList, "disk", "compute", true, "Lists the disks in a zone of a project."},
	{"Disks_Get", search.KindGet, "disk", "compute", true, "Gets a disk in a zone of a project."},
	{"Disks_Resize", search.KindUpdate, "disk", "compute", false, "Resizes a disk in a zone of a project."},
	{"Disks_CreateSnapshot", search.KindCreate, "snapshot", "compute", false, "Creates a snapshot of a disk in a zone of a project."},
	{"Subscriber_CreateSnapshot", search.KindCreate, "snapshot", "messaging", false, "Creates a snapshot of a subscription in a project."},
	{"Publisher_ListTopics", search.KindList, "topic", "messaging", true, "Lists the topics in a project."},
	{"Publisher_Publish", "", "topic", "messaging", false, "Publishes the messages to a topic in a project."},
	{"Publisher_GetIamPolicy", search.KindGet, "iam policy", "messaging", true, "Gets the IAM policy of a topic in a project."},
	{"WorkflowService_TerminateWorkflowExecution", "", "workflow execution", "workflow", false, "Terminates a workflow execution in a namespace."},
	{"WorkflowService_ResetWorkflowExecution", "", "workflow execution", "workflow", false, "Resets a workflow execution in a namespace."},
	{"WorkflowService_ListWorkflowExecutions", search.KindList, "workflow executions", "workflow", true, "Lists the workflow executions in a namespace."},
	{"WorkflowService_StartBatchOperation", "", "batch operation", "workflow", false, "Starts a batch operation in a namespace."},
}

func apiIndex() *search.Index {
	docs := make([]search.Document, len(api))
	for i, d := range api {
		_, method, _ := strings.Cut(d.name, "_")
		docs[i] = search.Document{Key: d.name, Action: search.Tokens(method)[0], Kind: d.kind, ReadOnly: d.readOnly, Target: d.target, Group: d.group,
			Several: strings.Contains(d.name, "Batch"),
			Fields:  []search.Field{{Text: method, Weight: 3, Pairs: true}, {Text: d.name, Weight: 2, Pairs: true}, {Text: d.desc, Weight: 1}}}
	}
	return search.New(docs)
}

// TestSearchClasses: each class of request the issue names ranks the
// right tool first on a catalog of several APIs. The rows are classes,
// not a relevance set: the estates' sets measure the ranking.
func TestSearchClasses(t *testing.T) {
	ix := apiIndex()
	for _, tc := range []struct{ class, query, want string }{
		{"user noun: vm for an instance", "list vms", "Instances_List"},
		{"user noun: server, idiom: get rid of", "get rid of the old server", "Instances_Delete"},
		{"user noun: volume, verb idiom: grow", "grow my volume to 500 GB", "Disks_Resize"},
		{"question form prefers List over Get", "which disks do I have?", "Disks_List"},
		{"question form: show me every", "show me every workflow", "WorkflowService_ListWorkflowExecutions"},
		{"verb idiom: switch off", "switch off the box web-3", "Instances_Stop"},
		{"coherence: the API that knows the volume", "take a snapshot of my volume", "Disks_CreateSnapshot"},
		{"access question names the IAM policy", "who has access to the orders topic", "Publisher_GetIamPolicy"},
		{"verb idiom: kill", "kill the stuck order-123 workflow", "WorkflowService_TerminateWorkflowExecution"},
		{"verb idiom: rewind", "rewind the renewal workflow to yesterday", "WorkflowService_ResetWorkflowExecution"},
		{"the request's object, not a noun of its aside", "add the label env=staging to web-1 so the firewall rule applies", "Instances_SetLabels"},
		{"user noun: channel for a topic", "send a message to the orders channel", "Publisher_Publish"},
	} {
		hits := ix.Search(tc.query, 3)
		var got []string
		for _, h := range hits {
			got = append(got, api[h.Doc].name)
		}
		if len(got) == 0 || got[0] != tc.want {
			t.Errorf("%s: %q: %v, want %s first", tc.class, tc.query, got, tc.want)
		}
	}
	// A change to every one of a kind lifts the batch operation, which
	// the same change to one does not need.
	rank := func(q string) int {
		for i, h := range ix.Search(q, len(api)) {
			if api[h.Doc].name == "WorkflowService_StartBatchOperation" {
				return i
			}
		}
		return len(api)
	}
	one, every := rank("terminate the LegacySync workflow"), rank("terminate every LegacySync workflow that is still running")
	if every >= one || every > 1 {
		t.Errorf("the batch operation ranks #%d for every workflow and #%d for one; want it higher for every, and in the first two", every+1, one+1)
	}
}

// factorDoc is a document for the factor tests: every one has the same
// fields, so only the factor under test tells them apart.
func factorDoc(key, kind, target, whole, group string, readOnly, several bool, text string) search.Document {
	_, method, _ := strings.Cut(key, "_")
	return search.Document{Key: key, Action: search.Tokens(method)[0], Kind: kind, ReadOnly: readOnly, Target: target, Whole: whole,
		Group: group, Several: several, Fields: []search.Field{{Text: text, Weight: 1, Pairs: true}}}
}

func superseded(d search.Document) search.Document {
	d.Superseded = true
	return d
}

func first(t *testing.T, docs []search.Document, query string) string {
	t.Helper()
	hits := search.New(docs).Search(query, 1)
	if len(hits) == 0 {
		return ""
	}
	return docs[hits[0].Doc].Key
}

// TestSearchFactors: each factor of the ranking decides between two
// documents that BM25F alone cannot tell apart (the same words, in the
// same fields), so removing any factor fails its row.
func TestSearchFactors(t *testing.T) {
	for _, tc := range []struct {
		factor, query, want string
		docs                []search.Document
	}{
		{"kindFactor: a list asked for", "which widgets do I have", "W_ListWidgets", []search.Document{
			factorDoc("W_GetWidgets", search.KindGet, "widget", "", "w", true, false, "widgets"),
			factorDoc("W_ListWidgets", search.KindList, "widget", "", "w", true, false, "widgets"),
		}},
		{"kindFactor: a read is not a write", "show me the widget", "W_ReadWidget", []search.Document{
			factorDoc("W_FrobWidget", "", "widget", "", "w", false, false, "widget"),
			factorDoc("W_ReadWidget", "", "widget", "", "w", true, false, "widget"),
		}},
		{"ActionBoost: the verb used", "polish the widget", "W_PolishWidget", []search.Document{
			factorDoc("W_BuffWidget", "", "widget", "", "w", false, false, "widget polish"),
			factorDoc("W_PolishWidget", "", "widget", "", "w", false, false, "widget polish"),
		}},
		{"SynonymActionBoost: a synonym of the verb", "nuke the widget", "W_DeleteWidget", []search.Document{
			factorDoc("W_FrobWidget", "", "widget", "", "w", false, false, "widget"),
			factorDoc("W_DeleteWidget", "", "widget", "", "w", false, false, "widget"),
		}},
		{"TargetBoost: the request's object", "tune the gadget of the widget", "W_TuneGadget", []search.Document{
			factorDoc("W_TuneWidget", "", "widget", "", "w", false, false, "gadget widget"),
			factorDoc("W_TuneGadget", "", "gadget", "", "w", false, false, "gadget widget"),
		}},
		{"OtherTargetBoost: named elsewhere in the request", "tune the gizmo of the widget", "W_TuneWidget", []search.Document{
			factorDoc("W_TuneThing", "", "", "", "w", false, false, "gizmo widget"),
			factorDoc("W_TuneWidget", "", "widget", "", "w", false, false, "gizmo widget"),
		}},
		{"FullTargetBoost: every word of the target", "tune the big widget", "W_TuneBigWidget", []search.Document{
			factorDoc("W_TuneSmallWidget", "", "small widget", "", "w", false, false, "big widget"),
			factorDoc("W_TuneBigWidget", "", "big widget", "", "w", false, false, "big widget"),
		}},
		{"TargetMiss: something the request does not name", "tune the widget", "W_TuneWidget", []search.Document{
			factorDoc("W_TuneGizmo", "", "gizmo", "", "w", false, false, "widget"),
			factorDoc("W_TuneWidget", "", "", "", "w", false, false, "widget"),
		}},
		{"WholeMiss: a part of something not named", "tune the widget", "W_TuneWidget", []search.Document{
			factorDoc("Racks_TuneWidget", "", "widget", "rack", "w", false, false, "widget"),
			factorDoc("W_TuneWidget", "", "widget", "", "w", false, false, "widget"),
		}},
		{"coherence: the API that knows every word", "tune the widget gizmo", "B_TuneWidget", []search.Document{
			factorDoc("A_TuneWidget", "", "", "", "a", false, false, "widget"),
			factorDoc("B_TuneWidget", "", "", "", "b", false, false, "widget"),
			factorDoc("B_Other", "", "", "", "b", false, false, "gizmo"),
		}},
		{"coordination: every part of the request", "tune the widget gizmo", "W_TuneBoth", []search.Document{
			factorDoc("W_TuneWidget", "", "", "", "w", false, false, "widget widget widget gizmo"),
			factorDoc("W_TuneBoth", "", "", "", "w", false, false, "widget gizmo"),
		}},
		{"SeveralBoost: every one asked for", "reset every widget", "W_TuneBatch", []search.Document{
			factorDoc("W_TuneOne", "", "", "", "w", true, false, "widget"),
			factorDoc("W_TuneBatch", "", "", "", "w", true, true, "widget"),
		}},
		{"OneOfSeveral: a write of one where every one was asked for", "reset every widget", "W_ScanWidgets", []search.Document{
			factorDoc("W_TuneWidget", "", "", "", "w", false, false, "widget"),
			factorDoc("W_ScanWidgets", "", "", "", "w", true, false, "widget"),
		}},
		{"pairs: two words named together", "tune the machine type", "W_TuneMachineType", []search.Document{
			factorDoc("W_TuneTypeMachine", "", "", "", "w", false, false, "type of machine"),
			factorDoc("W_TuneMachineType", "", "", "", "w", false, false, "machine type of"),
		}},
		{"primaryWeight: the object weighs more", "tune the widget near the gizmo", "W_TuneW", []search.Document{
			factorDoc("W_TuneG", "", "", "", "w", false, false, "gizmo"),
			factorDoc("W_TuneW", "", "", "", "w", false, false, "widget"),
		}},
		{"SupersededFactor: the same operation in a preferred version", "tune the widget", "Ga_TuneWidget", []search.Document{
			superseded(factorDoc("Beta_TuneWidget", "", "", "", "beta", false, false, "widget")),
			factorDoc("Ga_TuneWidget", "", "", "", "ga", false, false, "widget"),
		}},
	} {
		if got := first(t, tc.docs, tc.query); got != tc.want {
			t.Errorf("%s: %q ranks %s first, want %s", tc.factor, tc.query, got, tc.want)
		}
	}
}

// TestSupersededRanksBelow: of two copies of one operation, the
// superseded one (a beta where a GA version exists) ranks below the other
// and below a distinct match of a little lower score, unless the query
// names a version or a stage, which may be the one it wants.
func TestSupersededRanksBelow(t *testing.T) {
	doc := func(key, text string, superseded bool) search.Document {
		return search.Document{Key: key, Action: "Stop", Superseded: superseded, Group: key,
			Fields: []search.Field{{Text: text, Weight: 3}}}
	}
	docs := []search.Document{
		doc("v1beta_Instances_Stop", "Stop Instances", true),
		doc("v1_Instances_Stop", "Stop Instances", false),
		doc("v1_Jobs_Stop", "Stop Jobs of instances", false),
	}
	ix := search.New(docs)
	names := func(q string) []string {
		var out []string
		for _, h := range ix.Search(q, 3) {
			out = append(out, docs[h.Doc].Key)
		}
		return out
	}
	if got, want := names("stop the instances"), []string{"v1_Instances_Stop", "v1_Jobs_Stop", "v1beta_Instances_Stop"}; !slices.Equal(got, want) {
		t.Errorf("no version named: %q, want %q", got, want)
	}
	for _, q := range []string{"stop the instances with the beta API", "stop instances (v1beta)", "google.cloud.compute.v1beta instances stop"} {
		if got := names(q); got[len(got)-1] == "v1beta_Instances_Stop" {
			t.Errorf("%q names a version, yet the superseded copy is last: %q", q, got)
		}
	}
	// A hyphenated name is a resource's, not a version.
	if got := names("stop the instances of clicks-v1"); got[len(got)-1] != "v1beta_Instances_Stop" {
		t.Errorf("a resource named clicks-v1 asked for a version: %q", got)
	}
}
