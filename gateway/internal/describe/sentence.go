package describe

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxRequired is how many required inputs a description names; the
// schema lists them all.
const maxRequired = 8

// Description says what the method does and what a call needs, from its
// structure: "Creates an instance in a zone of a project. Requires:
// project, zone, instanceResource." A long-running method adds what its
// operation holds when done. It never only repeats the method's name: a
// name that starts with no known verb is written out in words with its
// service.
func (a *Method) Description() string {
	var b strings.Builder
	b.WriteString(a.sentence())
	b.WriteString(a.Notes())
	return b.String()
}

// maxListed is how many inputs or outputs a description names.
const maxListed = 6

// Notes are the sentences of the description after the first: what a
// long-running method's operation holds when done, the inputs a call
// needs (or takes, when none is marked required), and what comes back.
// They say what the method's name cannot, for any API: a name like
// Range or Txn is explained by its request and response.
func (a *Method) Notes() string {
	var b strings.Builder
	if a.Result != nil && !(len(a.Result) == 1 && a.Result[0] == "empty") {
		r := phrase(a.Result)
		fmt.Fprintf(&b, " Its operation's result, when done, is %s %s.", article(r), r)
	}
	if len(a.Required) > 0 {
		names := a.Required
		more := ""
		if len(names) > maxRequired {
			more = fmt.Sprintf(" and %d more", len(names)-maxRequired)
			names = names[:maxRequired]
		}
		fmt.Fprintf(&b, " Requires: %s%s.", strings.Join(names, ", "), more)
	} else if len(a.Inputs) > 0 {
		fmt.Fprintf(&b, " Takes: %s.", a.listedFields(a.Inputs, a.inputMsgs))
	} else {
		b.WriteString(" Takes no arguments.")
	}
	switch {
	case a.longRunning:
	case a.operation:
		b.WriteString(" Returns an operation to follow.")
	case len(a.Outputs) > 0 && a.Streams:
		fmt.Fprintf(&b, " Streams messages of: %s.", a.listedFields(a.Outputs, a.outputMsgs))
	case len(a.Outputs) > 0:
		fmt.Fprintf(&b, " Returns: %s.", a.listedFields(a.Outputs, a.outputMsgs))
	case !a.Streams:
		b.WriteString(" Returns nothing.")
	}
	return b.String()
}

// maxInner is how many fields of a message a short list names.
const maxInner = 5

// listedFields is listed, with the fields of a message named in brackets
// when the list is short: "container (id, labels, image, runtime, spec
// and 6 more)" says what CreateContainer takes, where "container" alone
// only repeats the name.
func (a *Method) listedFields(names []string, msgs []protoreflect.MessageDescriptor) string {
	if len(names) > 2 || len(msgs) != len(names) {
		return listed(names)
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		md := msgs[i]
		if md == nil || md.IsMapEntry() || strings.HasPrefix(string(md.FullName()), "google.protobuf.") || md.Fields().Len() == 0 {
			continue
		}
		var inner []string
		fs := md.Fields()
		for j := range min(fs.Len(), maxInner) {
			inner = append(inner, a.fieldName(fs.Get(j)))
		}
		more := ""
		if fs.Len() > maxInner {
			more = fmt.Sprintf(" and %d more", fs.Len()-maxInner)
		}
		out[i] = n + " (" + strings.Join(inner, ", ") + more + ")"
	}
	return strings.Join(out, ", ")
}

// listed names up to maxListed fields, and how many more there are.
func listed(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

// Title is a short human name for the method: "Create instance (Google
// Cloud Compute v1)", "Set machine type of instance (Google Cloud Compute
// v1)", "List users (Temporal Cloud Service v1)".
func (a *Method) Title() string {
	var what string
	// A release stage or version in the name (ScheduleJobAlpha1) goes
	// after what the method does, not before it.
	var quals, stages []string
	for _, q := range a.Qualifiers {
		if versionLike(q) || stageLike(q) {
			stages = append(stages, q)
		} else {
			quals = append(quals, q)
		}
	}
	switch {
	case a.Verb == "" || compound(a.Object):
		what = upperFirst(phrase(a.Words))
	default:
		verb := a.displayVerb()
		if p, ok := phrasalVerbs[verb]; ok {
			verb = p
		}
		what = upperFirst(verb)
		if pre := strings.TrimSpace(a.Modifier + " " + strings.Join(quals, " ")); pre != "" {
			what = upperFirst(pre) + " " + verb
		}
		switch obj, res := a.Object, a.Resource; {
		case a.Kind == List && (len(obj) == 0 || sameThing(obj, res) || endsWith(obj, res)):
			what += " " + phrase(pluralWords(res))
		case len(obj) == 0 && a.resourceFromService && a.Kind == Custom:
		case len(obj) == 0 || sameThing(obj, res) || containsAll(obj, res):
			if len(obj) == 0 {
				obj = res
			}
			if p := intransitive[a.Verb]; p != "" && sameThing(obj, res) {
				what += " " + p
			}
			what += " " + phrase(obj)
		case a.Kind == List:
			what += " " + phrase(obj) + " in " + phrase(res)
		default:
			what += " " + phrase(obj) + " " + preposition(a.Verb) + " " + phrase(res)
		}
	}
	if len(stages) > 0 {
		what += " " + strings.Join(stages, " ")
	}
	if a.API == "" {
		return what
	}
	return what + " (" + a.API + ")"
}

// sentence is the description's first sentence.
func (a *Method) sentence() string {
	scope := a.scope()
	if a.Verb == "" && len(a.Noun) > 0 && a.Effect == Reads {
		return a.nounSentence(scope)
	}
	if a.Verb == "" {
		return a.nameSentence(scope)
	}
	v := upperFirst(conjugate(a.displayVerb()))
	obj, res := a.Object, a.Resource
	if _, verb := verbEffects[firstOf(obj)]; verb && a.Verb == "request" && len(obj) > 1 {
		// RequestCancelWorkflowExecution: requests to cancel a workflow
		// execution.
		return v + " to " + obj[0] + " " + withArticle(singularWords(obj[1:])) + scope + "."
	}
	if len(obj) > 1 && (obj[0] == "or" || obj[0] == "and") && isVerb(obj[1]) {
		// AddOrUpdateRemoteCluster: adds or updates a remote cluster.
		what := a.Resource
		if len(obj) > 2 {
			what = singularWords(obj[2:])
		}
		return v + " " + obj[0] + " " + conjugate(verbOf(obj[1])) + " " + withArticle(what) + scope + a.qualified() + "."
	}
	if p := firstOf(obj); len(obj) > 1 && objectPrepositions[p] && !slices.ContainsFunc(obj[1:], isVerb) {
		// GetFromFamily, SwitchToCustomMode, StartWithEncryptionKey: the
		// resource, then the phrase.
		rest := phrase(obj[1:])
		if p != "to" && p != "into" {
			rest = article(rest) + " " + rest
		}
		what := a.Resource
		switch {
		case a.resourceFromService:
			// ChatWithKeeper: nothing else names what it acts on.
			return v + " " + p + " " + rest + scope + a.qualified() + "."
		case sameThing(obj[1:], what) && len(a.Service) > 0:
			// Images.GetFromFamily's path names the family: the thing
			// got is the service's.
			what = singularWords(a.Service)
		}
		return v + " " + withArticle(what) + " " + p + " " + rest + scope + a.qualified() + "."
	}
	if compound(obj) {
		return a.nameSentence(scope)
	}
	several := a.Modifier == "batch" || a.Modifier == "bulk" || a.Modifier == "multi" || a.Modifier == "mass"
	var s string
	switch {
	case a.Kind == List || several:
		things := res
		if len(obj) > 0 && !sameThing(obj, res) && !endsWith(obj, res) {
			things = obj
		}
		det := "the"
		if several {
			det = "several"
		}
		s = v + " " + det + " " + phrase(pluralWords(things))
		if len(obj) > 0 && !sameThing(obj, res) && !containsAll(obj, res) {
			s += " in " + withArticle(res)
		}
	case len(obj) == 0 && a.resourceFromService && a.Kind == Custom:
		// Nothing names what the method acts on but its service, and
		// its verb is not one of the standard methods' (Check, Ping,
		// Watch); the notes that follow say what it takes and returns.
		s = v + " with the " + phrase(a.Service) + " service"
	case a.Verb == "keep" && len(obj) == 1 && obj[0] == "alive":
		// KeepAlive keeps a session or a lease alive.
		s = v + " " + withArticle(res) + " alive"
	case (len(obj) == 0 || sameThing(obj, res)) && intransitive[a.Verb] != "":
		// WaitOperation waits for an operation.
		s = v + " " + intransitive[a.Verb] + " " + withArticle(res)
	case len(obj) > 0 && isPlural(obj[len(obj)-1]) && sameThing(obj, res):
		// WatchFeedings, RecordObservations: a plural stays plural.
		if a.Effect == Adds || a.Kind == Create {
			s = v + " " + phrase(obj)
		} else {
			s = v + " the " + phrase(obj)
		}
	case len(obj) == 0 || sameThing(obj, res):
		s = v + " " + withArticleOf(res)
	case containsAll(obj, res) && !isPlural(obj[len(obj)-1]):
		s = v + " " + withArticle(obj)
	case containsAll(obj, res):
		s = v + " the " + phrase(obj)
	default:
		s = v + " " + determined(obj, a) + phrase(obj) + " " + preposition(a.Verb) + " " + withArticle(res)
	}
	if a.Aggregated && len(a.Parents) > 0 {
		// Compute's AggregatedList: every zone and region at once.
		s += " in every location of " + withArticle(a.Parents[0])
	} else {
		s += scope
	}
	if several {
		s += ", in one call"
	} else if m := modifiers[a.Modifier]; m != "" {
		s += ", " + m
	}
	return s + a.qualified() + "."
}

// qualified is the sentence's note of the words before the verb: " (raw)".
func (a *Method) qualified() string {
	if len(a.Qualifiers) == 0 {
		return ""
	}
	return " (" + phrase(a.Qualifiers) + ")"
}

// objectPrepositions start a name's object that says how, not what
// (GetFromFamily, SwitchToCustomMode, StartWithEncryptionKey).
var objectPrepositions = map[string]bool{"from": true, "to": true, "into": true, "by": true, "with": true, "for": true}

// intransitive are verbs that take their object after a preposition.
var intransitive = map[string]string{"wait": "for", "listen": "on", "subscribe": "to", "reply": "to", "respond": "to",
	"predict": "on", "explain": "on", "infer": "on"}

// displayVerb is the verb a sentence or title uses: the standard one
// where the name's verb is another word for it (Compute's Insert creates;
// a paged Get of many lists).
func (a *Method) displayVerb() string {
	switch {
	case a.Kind == List && (a.Verb == "get" || a.Verb == "fetch" || a.Verb == "read" || a.Verb == "aggregated"):
		return "list"
	case a.Verb == "insert" && (len(a.Object) == 0 || sameThing(a.Object, a.Resource)):
		return "create"
	}
	return a.Verb
}

// nameSentence is the sentence of a method whose name is no verb and
// noun, and says nothing of what it does: its name in words, as the
// service's operation. The notes (inputs, outputs) then say what the name
// cannot.
func (a *Method) nameSentence(scope string) string {
	return fmt.Sprintf("Performs the %s operation of the %s service%s.", phrase(a.Words), phrase(a.Service), scope)
}

// nounSentence is the sentence of a method named by a noun that it
// returns: "Returns the status of a container." (ContainerStatus),
// "Lists the plugins." (Plugins).
func (a *Method) nounSentence(scope string) string {
	n := slices.DeleteFunc(slices.Clone(a.Noun), func(w string) bool { return qualifierWords[w] })
	if len(n) == 0 {
		n = a.Noun
	}
	verb := "Returns"
	if a.Streams {
		verb = "Streams"
	}
	last := n[len(n)-1]
	switch {
	case a.Kind == List:
		return "Lists the " + phrase(n) + scope + a.qualified() + "."
	case len(n) > 1 && reportNouns[last]:
		// ImageFsInfo: the info of an image fs.
		return verb + " the " + last + " of " + withArticle(n[:len(n)-1]) + scope + "."
	case len(a.Subject) > 0 || len(a.Resource) > 0 && !a.resourceFromService && !sameThing(n, a.Resource):
		return verb + " the " + phrase(n) + " of " + withArticle(a.Resource) + scope + "."
	}
	return verb + " the " + phrase(n) + scope + "."
}

// conjugate is a verb for "it", phrasal verbs written out: looks up,
// shuts down, sets.
func conjugate(v string) string {
	if p, ok := phrasalVerbs[v]; ok {
		first, rest, _ := strings.Cut(p, " ")
		return thirdPerson(first) + " " + rest
	}
	return thirdPerson(verbOf(v))
}

func firstOf(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return w[0]
}

// scope places the resource among its parents: " in a zone of a
// project". Three levels say enough.
func (a *Method) scope() string {
	var b strings.Builder
	for i, p := range a.Parents {
		if i == 3 {
			break
		}
		if i == 0 {
			b.WriteString(" in ")
		} else {
			b.WriteString(" of ")
		}
		b.WriteString(withArticle(p))
	}
	return b.String()
}

// definite are the first words of a phrase that make it one of a kind:
// the next feeding time, the current version.
var definite = map[string]bool{"next": true, "current": true, "latest": true, "last": true, "first": true, "default": true, "effective": true, "previous": true}

// withArticleOf is withArticle, with "the" for what there is one of.
func withArticleOf(w []string) string {
	if len(w) > 0 && definite[w[0]] {
		return "the " + phrase(w)
	}
	return withArticle(w)
}

func withArticle(w []string) string {
	p := phrase(w)
	return article(p) + " " + p
}

// determined is the determiner of a verb's own object: "the" for a
// property or a plural (the machine type, the labels), "a" for something
// the call adds (a snapshot).
func determined(obj []string, a *Method) string {
	if isPlural(obj[len(obj)-1]) {
		return "the "
	}
	if a.Effect == Adds || a.Kind == Create {
		return article(phrase(obj)) + " "
	}
	return "the "
}

// sameThing reports whether two noun phrases name the same thing: equal
// once their last words are singular.
func sameThing(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if singular(a[i]) != singular(b[i]) {
			return false
		}
	}
	return true
}

// endsWith reports whether phrase a ends with phrase b (topic
// subscriptions ends with subscription): a says which b.
func endsWith(a, b []string) bool {
	return len(b) > 0 && len(a) > len(b) && sameThing(a[len(a)-len(b):], b)
}

// containsAll reports whether every word of b is in a (as a word or its
// singular): "workflow execution" contains "workflow".
func containsAll(a, b []string) bool {
	if len(b) == 0 {
		return false
	}
	for _, w := range b {
		found := false
		for _, x := range a {
			if singular(x) == singular(w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// pluralWords makes the last word of a noun phrase plural.
func pluralWords(w []string) []string {
	if len(w) == 0 {
		return w
	}
	out := append([]string(nil), w...)
	out[len(out)-1] = plural(singular(out[len(out)-1]))
	return out
}

// Target is the words of what the method's action is on: its name's own
// object (the machine type of SetMachineType), else the resource it acts
// on (the instance of Stop).
func (a *Method) Target() []string {
	if a.Verb == "" && len(a.Noun) > 0 {
		// ContainerStatus: the container status.
		return a.Noun
	}
	if len(a.Object) > 0 && !compound(a.Object) {
		return a.Object
	}
	return a.Resource
}

// Several reports whether the method acts on several things at once: a
// batch or bulk modifier (BatchCreateFeatures, BulkInsert), or it starts
// a batch operation (StartBatchOperation; not StopBatchOperation, which
// acts on one).
func (a *Method) Several() bool {
	switch a.Modifier {
	case "batch", "bulk", "multi", "mass":
		return true
	}
	switch a.Verb {
	case "start", "create", "run", "execute", "submit", "launch":
		return slices.Contains(a.Object, "batch") || slices.Contains(a.Object, "bulk")
	}
	return false
}
