package describe

import (
	"slices"
	"strings"
	"sync"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// Method is what the structure of an API says about one method. Analyze
// makes it; every field is derived, none is guessed from one API's
// vocabulary.
type Method struct {
	// Kind is the method's standard kind.
	Kind Kind
	// Effect is what its verb does to the world (verbs.go), Unknown when
	// its name starts with no verb of the table.
	Effect Effect
	// Verb is the name's leading verb, lowercase ("stop"); "" when the
	// name starts with no verb this package knows.
	Verb string
	// Modifier is a word before the verb that qualifies it: "batch",
	// "bulk", "async", "streaming"; "" for most.
	Modifier string
	// Qualifiers are adjectives before the verb: "raw" of RawPredict,
	// "soft" of SoftDeleteNamespace.
	Qualifiers []string
	// Subject is the nouns before the verb of a name in noun-verb order:
	// "user" of UserAdd, "role" of RoleGrantPermission, "lease" of
	// LeaseGrant.
	Subject []string
	// Noun is the words of a name that has no verb (Status, ImageFsInfo,
	// Plugins), nil otherwise.
	Noun []string
	// Inputs are the request's fields as the caller names them; Outputs
	// the response's, without the response headers many APIs repeat in
	// every message.
	Inputs, Outputs []string
	// Streams: the response is a server stream.
	Streams bool
	// selects: the request only selects (no field carries data to write,
	// no field says what action to take), so a method whose name has no
	// known verb reads when this holds.
	selects bool
	// keyed: the request has a top-level field that names what the
	// method acts on (name, id, key, or one ending in _id or _name).
	keyed bool
	// Words is the method's name in lowercase words.
	Words []string
	// Object is the words of the name after the verb (and modifier):
	// "machine type" of SetMachineType, "topic subscriptions" of
	// ListTopicSubscriptions; nil for Compute's Insert or Stop.
	Object []string
	// Resource is the singular words of what the method acts on: the
	// collection its HTTP path or resource pattern names, else the
	// resource its request references, else the service's noun
	// ("instance" of Instances, "dataset" of DatasetService).
	Resource []string
	// Parents are the singular words of the resources that enclose
	// Resource, nearest first ("zone", "project").
	Parents [][]string
	// Aggregated: a list across every scope of a parent (Compute's
	// AggregatedList).
	Aggregated bool
	// Service is the service's name in words, without a trailing
	// "service".
	Service []string
	// API is a short human name of the method's API: the package's
	// words and version, "Google Cloud Compute v1".
	API string
	// Required are the inputs a call needs, as the caller names them:
	// fields with field_behavior REQUIRED, proto2 required or
	// Options.Required (protovalidate's required), and the variables of
	// the HTTP path.
	Required []string
	// Result is the words of what a long-running method's operation
	// holds when done (Options.LongRunningResult), nil otherwise.
	Result []string
	// Paged: the method takes a page token (AIP-158).
	Paged bool
	// HTTPPath is the path of the google.api.http rule's primary
	// binding, "" without a rule.
	HTTPPath string

	idempotency descriptorpb.MethodOptions_IdempotencyLevel
	httpVerb    string
	// resourceFromService: nothing but the service's name said what the
	// method acts on.
	resourceFromService bool
	// longRunning: the method returns a google.longrunning.Operation.
	longRunning bool
	// inputMsgs and outputMsgs are the message types of Inputs and
	// Outputs (nil for a scalar), whose fields a short list names.
	inputMsgs, outputMsgs []protoreflect.MessageDescriptor
	// fieldName names fields as the caller does.
	fieldName func(protoreflect.FieldDescriptor) string
	// operation: the method answers with an operation to follow.
	operation bool
	// fromStructure: the effect was read from the request's structure,
	// not from a verb: a guess the catalog report shows.
	fromStructure bool
}

// Options are what Analyze cannot read from the method alone. Nil means
// none.
type Options struct {
	// FieldName is how the caller names a request field (its JSON name,
	// or its proto name); nil means the JSON name.
	FieldName func(protoreflect.FieldDescriptor) string
	// Resources finds the resource patterns of AIP-123 resource types,
	// for methods without an HTTP rule; nil means none.
	Resources *Resources
	// Required reports whether rules the backend enforces beyond
	// field_behavior make a request field required (protovalidate's
	// required); nil means none.
	Required func(protoreflect.FieldDescriptor) bool
	// LongRunningResult is the full name of the message a long-running
	// method's operation holds when done, "" when the method is not
	// long-running or does not say.
	LongRunningResult string
}

// Analyze reads m.
func Analyze(m protoreflect.MethodDescriptor, opts *Options) *Method {
	if opts == nil {
		opts = &Options{}
	}
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	a := &Method{Words: splitWords(string(m.Name())), Service: serviceWords(svc.Name())}
	a.API = apiName(svc)
	rest := a.Words
	if len(rest) > 1 && rest[0] == "aggregated" {
		a.Aggregated = true
	}
	if len(rest) > 1 && modifiers[rest[0]] != "" {
		a.Modifier, rest = rest[0], rest[1:]
	}
	// A name that starts with its service's noun and goes on with a verb
	// or another noun is in noun-verb order (etcd's Lease service:
	// LeaseGrant, LeaseRevoke, LeaseTimeToLive): the noun is what the
	// method acts on.
	if len(rest) > 1 && len(a.Service) > 0 && singular(rest[0]) == singular(a.Service[len(a.Service)-1]) &&
		!compound(rest[1:]) {
		a.Subject, rest = rest[:1], rest[1:]
	}
	// Up to two words before the verb: adjectives qualify it (RawPredict,
	// ServerStreamingPredict, SoftDeleteNamespace); nouns are what it acts
	// on, in noun-verb order (UserAdd, RoleGrantPermission).
	for skip := 0; skip <= 2 && skip < len(rest); skip++ {
		if isVerb(verbOf(rest[skip])) {
			for _, w := range rest[:skip] {
				if qualifierWords[w] || modifiers[w] != "" {
					a.Qualifiers = append(a.Qualifiers, w)
				} else {
					a.Subject = append(a.Subject, w)
				}
			}
			a.Verb, a.Object = verbOf(rest[skip]), rest[skip+1:]
			break
		}
	}
	if a.Verb == "" && (a.Modifier == "stream" || a.Modifier == "streaming") {
		// StreamImages, StreamContainerStats: a list sent as a stream.
		a.Modifier = ""
		if m.IsStreamingServer() {
			a.Verb, a.Object, a.Modifier = "list", rest, "stream"
		}
	}
	if a.Verb == "" {
		// A name that is a noun alone (Status, ImageFsInfo, Plugins): what
		// the method returns, when its request only selects (see reads).
		a.Noun = rest
	}
	if n := len(a.Object); n > 0 && (versionLike(a.Object[n-1]) || stageLike(a.Object[n-1])) {
		// ScheduleJobAlpha1, OperatePrivilegeV2: the version is no part
		// of the object.
		a.Qualifiers = append(a.Qualifiers, a.Object[n-1])
		a.Object = a.Object[:n-1]
	}
	if a.Verb == "load" && firstOf(a.Object) == "balance" {
		// LoadBalance moves load between nodes; it loads nothing.
		a.Verb, a.Object = "balance", a.Object[1:]
	}
	a.Effect = verbEffects[a.Verb]
	a.Kind = kindOf(a.Verb)
	switch a.Verb {
	case "subscribe", "follow", "listen", "tail":
		// A subscription the server streams reads; one that consumes
		// (a bidirectional stream that acknowledges) or registers a
		// subscription adds.
		switch {
		case m.IsStreamingServer() && !m.IsStreamingClient():
			a.Effect = Reads
		case !m.IsStreamingServer() && !m.IsStreamingClient():
			a.Effect = Adds
		}
	case "expand":
		// Expanding a tree reads (ExpandPermissionTree); expanding a
		// resource, which answers with an operation, grows it
		// (ExpandIpCidrRange).
		a.Effect = Reads
		if m.Output().Name() == "Operation" {
			a.Effect = Changes
		}
	case "execute", "run":
		// Running a scan, or a tool named for a reading verb (an
		// analyzer, a validator), reads.
		if slices.ContainsFunc(a.Object, func(w string) bool { return w == "scan" || agentOfReads(w) }) {
			a.Effect = Reads
		}
	}
	if a.Effect == Reads && consumes[a.Verb] && m.IsStreamingClient() && m.IsStreamingServer() {
		// A bidirectional stream that reads also answers the server
		// (StreamRead commits offsets, StreamingPull acknowledges): it
		// is not vouched to change nothing. A watch only asks, and an
		// encryption stream only computes.
		a.Effect = Unknown
	}
	if a.Effect == Adds && slices.ContainsFunc(a.Object, func(w string) bool { return keyValueNouns[w] }) {
		// Adding tags or labels sets their values, overwriting a key
		// that is there.
		a.Effect = Changes
	}
	// "Request" followed by another verb asks for that verb's action
	// (RequestCancelWorkflowExecution): the second verb says what
	// happens.
	if a.Verb == "request" && len(a.Object) > 1 {
		if e, ok := verbEffects[a.Object[0]]; ok {
			a.Effect, a.Kind = e, kindOf(a.Object[0])
		}
	}
	if a.Verb == "aggregated" {
		a.Verb, a.Kind = "list", List
		a.Object = slices.DeleteFunc(slices.Clone(a.Object), func(w string) bool { return w == "list" })
	}
	// The table vouches for one verb. A name that joins another to it
	// (GetOrCreate, FetchAndLock, GetAndIncrement) or that writes after a
	// reading verb (ReadModifyWriteRow, FeatureViewDirectWrite) does
	// more than the verb says: nothing is guessed for it.
	for i, w := range a.Object {
		if (w == "or" || w == "and") && i+1 < len(a.Object) || a.Effect == Reads && writeWords[w] {
			a.Effect, a.Kind = Unknown, Custom
			break
		}
	}

	in := m.Input()
	fields := in.Fields()
	name := opts.FieldName
	if name == nil {
		name = protoreflect.FieldDescriptor.JSONName
	}
	var refType, anyRef string
	a.selects = true
	for i := range fields.Len() {
		fd := fields.Get(i)
		facts := descriptors.Field(fd)
		a.Inputs = append(a.Inputs, name(fd))
		a.inputMsgs = append(a.inputMsgs, fd.Message())
		a.selects = a.selects && selector(fd)
		if keyField(fd) || fields.Len() == 1 && keyedMessage(fd) {
			a.keyed = true
		}
		if facts.Required || fd.Cardinality() == protoreflect.Required || opts.Required != nil && opts.Required(fd) {
			a.Required = append(a.Required, name(fd))
		}
		switch fd.Name() {
		case "page_token", "next_page_token":
			a.Paged = true
		case "name", "parent", "resource":
			if refType == "" {
				refType = facts.ResourceType
				if refType == "" || refType == "*" {
					refType = facts.ChildType
				}
			}
		default:
			// Another field that references a resource (StreamingPull's
			// subscription) says what the method acts on, when name,
			// parent and resource do not.
			if anyRef == "" && facts.ResourceType != "" && facts.ResourceType != "*" {
				anyRef = facts.ResourceType
			}
		}
	}

	a.fieldName = name
	a.Streams = m.IsStreamingServer()
	switch m.Output().Name() {
	case "Operation":
		// An operation to follow (Compute's, google.longrunning's): its
		// fields are the same for every method, and say nothing of it.
		a.operation = true
	case "Status":
		// A response that is itself a status (Milvus's common.Status)
		// says only whether the call worked.
	default:
		outs := m.Output().Fields()
		for i := range outs.Len() {
			if fd := outs.Get(i); !boilerplate(fd) {
				a.Outputs = append(a.Outputs, name(fd))
				a.outputMsgs = append(a.outputMsgs, fd.Message())
			}
		}
	}
	a.idempotency = descriptors.IdempotencyLevel(m)
	var sh shape
	if rule := descriptors.HTTPRule(m); rule != nil {
		a.HTTPPath, a.httpVerb = httpPath(rule), httpVerb(rule)
		sh = parseShape(a.HTTPPath)
		// Path variables are required whatever the field says: the call
		// cannot be routed without them.
		for _, v := range pathVariables(httpPath(rule)) {
			if fd := fieldByPath(in, v); fd != nil && !slices.Contains(a.Required, name(fd)) {
				a.Required = append(a.Required, name(fd))
			}
		}
	}
	if refType == "" {
		refType = anyRef
	}
	if sh.resource == nil && refType != "" {
		if p := opts.Resources.pattern(refType); p != "" {
			sh = parseShape(p)
		} else if _, typ, ok := strings.Cut(refType, "/"); ok {
			sh.resource = splitWords(typ)
		}
	}
	// A path whose last collection is the verb itself names what the
	// call sends, not what it acts on: .../workflows/{id}/signal/{name}.
	if len(sh.resource) == 1 && sh.resource[0] == a.Verb && len(sh.parents) > 0 {
		sh.resource, sh.parents = sh.parents[0], sh.parents[1:]
	}
	a.Resource, a.Parents, a.Aggregated = sh.resource, sh.parents, a.Aggregated || sh.aggregated
	if a.Resource == nil {
		// Nothing but the service's name says what the method acts on:
		// the name's own subject or object says more, when it has one.
		if len(a.Subject) > 0 {
			a.Resource = singularWords(a.Subject)
		} else if len(a.Object) > 0 && a.Verb != "" && !compound(a.Object) {
			a.Resource = singularWords(a.Object)
		} else {
			a.Resource, a.resourceFromService = singularWords(a.Service), true
		}
	}
	// A search or query of one thing reads it (QueryWorkflow); of many,
	// lists them (SearchDataItems).
	if a.Kind == List && (a.Verb == "query" || a.Verb == "search" || a.Verb == "find") && !a.Paged &&
		len(a.Object) > 0 && !isPlural(a.Object[len(a.Object)-1]) {
		a.Kind = Get
	}
	if a.Kind == Get && len(a.Object) > 0 && isPlural(a.Object[len(a.Object)-1]) && !oneThing[a.Object[len(a.Object)-1]] {
		a.Kind = List // GetUsers, GetRegions: a list by another name
	}
	if a.Kind == Custom && a.Effect == Reads && a.Paged {
		a.Kind = List
	}
	if n := a.Noun; len(n) > 0 && a.Effect == Unknown {
		// A name that is a noun alone reads when the noun is one a call
		// reports (Status, ContainerStats), when it is plural (Plugins:
		// a list), or when the request only selects (Range, Hash).
		// A word this package does not know may be a verb
		// (Frobnicate): a name starting with a verb's ending is not read
		// as a noun.
		last := n[len(n)-1]
		switch {
		case verbLike(n[0]) || a.writesByName():
		case reportNouns[last]:
			a.Effect, a.Kind = Reads, Get
		case isPlural(last) && !oneThing[last] && a.selects:
			a.Effect, a.Kind = Reads, List
		case a.selects && len(a.Outputs) > 0 && !isVerb(n[0]) && m.Input() != m.Output():
			// Range, Hash, Facet: a request that only selects and a
			// response of its own that carries data (a method answering
			// with its request's message echoes or updates it).
			a.Effect, a.Kind = Reads, Get
		}
		a.fromStructure = a.Effect == Reads
	}
	a.longRunning = m.Output().FullName() == "google.longrunning.Operation" || opts.LongRunningResult != ""
	if opts.LongRunningResult != "" {
		full := protoreflect.FullName(opts.LongRunningResult)
		a.Result = splitWords(string(full.Name()))
	}
	return a
}

// verbOf is a name's word as a verb: its long form when the name
// abbreviates it (Exec, Alloc).
func verbOf(w string) string {
	if v, ok := verbAliases[w]; ok {
		return v
	}
	return w
}

// selector reports whether a request field only selects what a call
// reads: a scalar (not bytes, which carry data) or an enum, a map of
// labels, or a message of such fields (a filter, a time range), and not
// a field that says what to do (action, operation, op, command).
func selector(fd protoreflect.FieldDescriptor) bool {
	switch fd.Name() {
	case "action", "operation", "op", "ops", "command", "mode", "request", "requests", "value", "data",
		"payload", "body", "content", "update", "updates", "mutation", "mutations":
		return false
	}
	if fd.IsMap() {
		return true
	}
	n := string(fd.Name())
	switch fd.Kind() {
	case protoreflect.BytesKind:
		// Bytes carry data, unless they are a key (etcd's key and
		// range_end).
		return keyField(fd) || strings.HasPrefix(n, "range") || strings.HasSuffix(n, "key") || strings.HasSuffix(n, "prefix")
	case protoreflect.GroupKind:
		return false
	case protoreflect.MessageKind:
		if fd.IsList() {
			return false
		}
		switch n {
		case "filter", "filters", "selector", "consistency", "read_consistency", "options", "time_range", "where",
			"shard_key_selector", "page", "pagination", "read_mask", "field_mask", "since", "until":
			return true
		}
		md := fd.Message()
		if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return true
		}
		fs := md.Fields()
		for i := range fs.Len() {
			f := fs.Get(i)
			if f.Kind() == protoreflect.MessageKind && !strings.HasPrefix(string(f.Message().FullName()), "google.protobuf.") || f.Kind() == protoreflect.BytesKind {
				return false
			}
		}
	}
	return true
}

// keyField reports whether fd names what a call acts on: name, id, key,
// or a name ending in _id, _name or _key (a request_id only dedupes).
func keyField(fd protoreflect.FieldDescriptor) bool {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.Int64Kind, protoreflect.Uint64Kind, protoreflect.BytesKind:
	default:
		return false
	}
	if fd.IsList() {
		return false
	}
	n := strings.ToLower(string(fd.Name()))
	switch {
	case n == "request_id" || n == "parent":
		return false
	case n == "name" || n == "id" || n == "key" || n == "path":
		return true
	}
	return strings.HasSuffix(n, "_id") || strings.HasSuffix(n, "name") || strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "_path")
}

// keyedMessage reports whether a request's message field is the thing a
// create adds, with its name or ID inside (containerd's
// CreateContainerRequest.container.id).
func keyedMessage(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
		return false
	}
	fs := fd.Message().Fields()
	for i := range fs.Len() {
		if keyField(fs.Get(i)) {
			return true
		}
	}
	return false
}

// boilerplate reports whether a response field is a header many APIs
// repeat in every response (etcd's header), which says nothing of what
// the method returns.
func boilerplate(fd protoreflect.FieldDescriptor) bool {
	switch fd.Name() {
	case "header", "response_header", "resp_header":
		return true
	case "status":
		// A status beside the data (Milvus's common.Status) says whether
		// the call worked, not what it returns.
		return fd.Message() != nil && fd.Message().Name() == "Status" && fd.Parent().(protoreflect.MessageDescriptor).Fields().Len() > 1
	}
	return false
}

// writesByName reports whether a noun-only name says it writes: a
// transaction, a batch or a mutation.
func (a *Method) writesByName() bool {
	for _, w := range a.Noun {
		switch singular(w) {
		case "txn", "transaction", "batch", "mutation", "alarm", "write", "update", "operation", "action", "command":
			return true
		}
		if !reportNouns[w] && (strings.HasSuffix(w, "tion") || strings.HasSuffix(w, "sion") || strings.HasSuffix(w, "ment")) {
			// A noun of an action (Compaction, Migration, Deployment):
			// the method does it.
			return true
		}
	}
	return false
}

// stageLike reports whether w is a release stage with its number
// (alpha1, beta2).
func stageLike(w string) bool {
	for _, p := range []string{"alpha", "beta"} {
		if rest, ok := strings.CutPrefix(w, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// verbLike reports whether w has an ending English gives verbs
// (frobnicate, tokenize, simplify, harden).
func verbLike(w string) bool {
	for _, suf := range []string{"ate", "ize", "ise", "ify", "en"} {
		if strings.HasSuffix(w, suf) && len(w) > len(suf)+2 {
			return true
		}
	}
	return false
}

// consumes are reading verbs whose bidirectional stream consumes what it
// reads.
var consumes = map[string]bool{"read": true, "pull": true, "receive": true, "consume": true, "fetch": true, "poll": true}

// keyValueNouns name maps of keys to values, which an add overwrites.
var keyValueNouns = map[string]bool{
	"tags": true, "labels": true, "annotations": true, "metadata": true, "properties": true, "attributes": true,
}

// agentOfReads reports whether w names what does a reading verb: an
// analyzer analyzes, a validator validates, a checker checks.
func agentOfReads(w string) bool {
	for _, cut := range []string{"r", "er", "or"} {
		if base, ok := strings.CutSuffix(w, cut); ok && len(base) > 2 {
			for _, v := range []string{base, base + "e"} {
				if verbEffects[v] == Reads {
					return true
				}
			}
		}
	}
	return false
}

func isVerb(w string) bool {
	_, ok := verbEffects[w]
	return ok || grammarVerbs[w]
}

// oneThing are plurals that name one thing a Get returns (GetSettings,
// GetMetrics), not a list.
var oneThing = map[string]bool{
	"data": true, "metadata": true, "settings": true, "details": true, "stats": true, "statistics": true,
	"metrics": true, "credentials": true, "preferences": true, "analytics": true, "contents": true,
}

// writeWords are verbs that only write, and so are never the name of a
// thing a reading method reads (unlike backup, snapshot or label).
var writeWords = map[string]bool{
	"write": true, "modify": true, "increment": true, "decrement": true, "mutate": true, "delete": true,
	"remove": true, "create": true, "update": true, "insert": true, "append": true, "put": true, "pop": true,
	"push": true, "commit": true, "set": true, "clear": true, "purge": true, "truncate": true, "upsert": true,
}

// compound reports whether a method's object starts with a word that
// makes the name a phrase of its own rather than verb and noun
// (SignalWithStart..., AddOrUpdate...).
func compound(obj []string) bool {
	if len(obj) == 0 {
		return false
	}
	switch obj[0] {
	case "with", "or", "and", "by", "to", "from", "if", "for":
		return true
	}
	return false
}

// grammarVerbs are verbs the table gives no effect (their effect depends
// on the API: GenerateContent reads, GenerateAccessToken mints a
// credential), known so that a name starting with one still reads as a
// sentence.
var grammarVerbs = map[string]bool{
	"generate": true, "suggest": true, "resolve": true, "transcode": true, "encode": true, "decode": true,
	"render": true, "print": true, "audit": true, "dry": true, "exchange": true, "authenticate": true,
	"authorize": true, "impersonate": true, "share": true, "unshare": true,
	"archive": true, "unarchive": true,
	// Verbs whose effect depends on what they act on, decided by the
	// method's structure (Analyze): Subscribe and Follow read as server
	// streams and add otherwise; Expand reads a tree (ExpandPermission-
	// Tree) and, behind a writing HTTP rule, grows a resource.
	"expand": true, "subscribe": true, "follow": true, "listen": true, "tail": true,
	// Verbs of business services.
	"feed": true, "chat": true, "talk": true, "observe": true, "track": true, "ship": true, "sell": true,
	"buy": true, "pay": true, "charge": true, "refund": true, "deliver": true,
	"cook": true, "quote": true, "price": true, "withdraw": true,
	"deposit": true, "redeem": true, "rate": true,
	"upvote": true, "dial": true,
	"transcribe": true, "forecast": true, "measure": true,
	// Verbs of networks and infrastructure.
	"announce": true, "advertise": true, "expose": true, "propagate": true, "invalidate": true,
	"purchase": true, "probe": true, "isolate": true, "quarantine": true,
	// Verbs of retrieval and generation.
	"ask": true, "augment": true, "corroborate": true, "ground": true, "rewrite": true, "chunk": true,
}

// httpPath is the path of a rule's primary binding.
func httpPath(r *annotations.HttpRule) string {
	return r.GetGet() + r.GetPut() + r.GetPost() + r.GetDelete() + r.GetPatch() + r.GetCustom().GetPath()
}

// pathVariables are the field paths of a template's variables.
func pathVariables(t string) []string {
	var out []string
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return out
		}
		v, _, _ := strings.Cut(t[i+1:i+j], "=")
		out = append(out, v)
		t = t[i+j+1:]
	}
}

// fieldByPath finds the top-level field a dotted field path starts with
// (topic.name: topic).
func fieldByPath(md protoreflect.MessageDescriptor, path string) protoreflect.FieldDescriptor {
	first, _, _ := strings.Cut(path, ".")
	return md.Fields().ByName(protoreflect.Name(first))
}

// serviceWords is a service's name in words, without the "service" that
// many names end in.
func serviceWords(n protoreflect.Name) []string {
	w := splitWords(string(n))
	if len(w) > 1 && w[len(w)-1] == "service" {
		w = w[:len(w)-1]
	}
	return w
}

// apiName names a service's API for people: its package's words, a
// segment equal to the service's name written as the service writes it,
// and the version last ("Google Cloud Compute v1", "Temporal Workflow
// Service v1").
func apiName(svc protoreflect.ServiceDescriptor) string {
	var words []string
	version := ""
	for seg := range strings.SplitSeq(string(svc.ParentFile().Package()), ".") {
		switch {
		case seg == "":
		case versionLike(seg):
			version = seg
		case seg == "api" || seg == "apis" || seg == "proto" || seg == "protos" || seg == "grpc" || seg == "rpc" || seg == "services":
		case len(seg) > 4 && strings.HasSuffix(seg, "pb"):
			// etcdserverpb: the generated package's suffix.
			words = append(words, splitWords(strings.TrimSuffix(seg, "pb"))...)
		case strings.EqualFold(seg, string(svc.Name())):
			words = append(words, splitWords(string(svc.Name()))...)
		default:
			words = append(words, splitWords(seg)...)
		}
	}
	words = slices.Compact(words)
	for i, w := range words {
		if acronyms[w] {
			words[i] = strings.ToUpper(w)
		} else {
			words[i] = upperFirst(w)
		}
	}
	if version != "" {
		words = append(words, version)
	}
	return strings.Join(words, " ")
}

// Resources finds AIP-123 resource patterns by resource type, from the
// google.api.resource options of a backend's messages and the
// google.api.resource_definition options of its files. It is built once
// per discovery and read by Analyze.
type Resources struct {
	files    *protoregistry.Files
	once     sync.Once
	patterns map[string]string
}

// NewResources indexes the resource types of files lazily: nothing is
// read until a method without an HTTP rule asks. It is safe for
// concurrent use.
func NewResources(files *protoregistry.Files) *Resources {
	return &Resources{files: files}
}

func (r *Resources) pattern(typ string) string {
	if r == nil || r.files == nil {
		return ""
	}
	r.once.Do(func() {
		r.patterns = make(map[string]string)
		r.files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			r.indexFile(fd)
			return true
		})
	})
	return r.patterns[typ]
}

func (r *Resources) indexFile(fd protoreflect.FileDescriptor) {
	for _, rd := range descriptors.ResourceDefinitions(fd) {
		r.add(rd)
	}
	var visit func(ms protoreflect.MessageDescriptors)
	visit = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			md := ms.Get(i)
			if rd := descriptors.Resource(md); rd != nil {
				r.add(rd)
			}
			visit(md.Messages())
		}
	}
	visit(fd.Messages())
}

func (r *Resources) add(rd *annotations.ResourceDescriptor) {
	if p := rd.GetPattern(); len(p) > 0 && rd.GetType() != "" {
		if _, dup := r.patterns[rd.GetType()]; !dup {
			r.patterns[rd.GetType()] = p[0]
		}
	}
}
