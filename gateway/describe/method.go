package describe

import (
	"slices"
	"strings"
	"sync"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/reflection"
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
	// Qualifiers are other words before the verb: "raw" of RawPredict,
	// "soft" of SoftDeleteNamespace.
	Qualifiers []string
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
	// fields with field_behavior REQUIRED or proto2 required, and the
	// variables of the HTTP path.
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
	// Up to two words before the verb qualify it (RawPredict,
	// ServerStreamingPredict, SoftDeleteNamespace).
	for skip := 0; skip <= 2 && skip < len(rest); skip++ {
		if isVerb(rest[skip]) {
			a.Qualifiers = append(a.Qualifiers, rest[:skip]...)
			a.Verb, a.Object = rest[skip], rest[skip+1:]
			break
		}
	}
	a.Effect = verbEffects[a.Verb]
	a.Kind = kindOf(a.Verb)
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
	for i := range fields.Len() {
		fd := fields.Get(i)
		facts := reflection.Field(fd)
		if facts.Required || fd.Cardinality() == protoreflect.Required {
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

	a.idempotency = reflection.IdempotencyLevel(m)
	var sh shape
	if rule := reflection.HTTPRule(m); rule != nil {
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
		// the name's own object says more, when it has one.
		if len(a.Object) > 0 && a.Verb != "" && !compound(a.Object) {
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
	a.longRunning = m.Output().FullName() == "google.longrunning.Operation" || opts.LongRunningResult != ""
	if opts.LongRunningResult != "" {
		full := protoreflect.FullName(opts.LongRunningResult)
		a.Result = splitWords(string(full.Name()))
	}
	return a
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
	"store": true, "save": true, "load": true, "archive": true, "unarchive": true,
	// Verbs of business services.
	"feed": true, "chat": true, "talk": true, "observe": true, "track": true, "ship": true, "sell": true,
	"buy": true, "pay": true, "charge": true, "refund": true, "deliver": true,
	"cook": true, "quote": true, "price": true, "withdraw": true,
	"deposit": true, "redeem": true, "rate": true,
	"upvote": true, "dial": true,
	"transcribe": true, "forecast": true, "measure": true,
	// Verbs of networks and infrastructure.
	"announce": true, "advertise": true, "expose": true, "propagate": true, "flush": true, "invalidate": true,
	"purchase": true, "probe": true, "isolate": true, "quarantine": true, "wait": true,
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
		case seg == "api" || seg == "apis" || seg == "proto" || seg == "protos" || seg == "grpc" || seg == "rpc":
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
	for _, rd := range reflection.ResourceDefinitions(fd) {
		r.add(rd)
	}
	var visit func(ms protoreflect.MessageDescriptors)
	visit = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			md := ms.Get(i)
			if rd := reflection.Resource(md); rd != nil {
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
