package describe

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Hints are the four MCP tool hints, every one decided.
type Hints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// Source names where each hint came from, for tests and logs.
type Source string

// The sources of a hint, strongest first. (The owners' own
// (mcpgateway.v1.tool) option wins over all of them; the gateway applies
// it.)
const (
	FromIdempotencyLevel Source = "idempotency_level"
	FromHTTPRule         Source = "google.api.http"
	FromVerbTable        Source = "verb table"
	// FromStructure: the method's name has no verb the table knows, and
	// its request and name say it reads (a name that is a noun alone,
	// such as Status or ContainerStats, whose request only selects).
	FromStructure Source = "structure"
	FromDefault   Source = "default"
)

// HintSources says where each of Hints came from.
type HintSources struct {
	ReadOnly, Destructive, Idempotent, OpenWorld Source
}

// hint is one hint being decided: unset until a source speaks to it.
type hint struct {
	v   bool
	src Source
}

func (h *hint) set(v bool, src Source) {
	if h.src == "" {
		h.v, h.src = v, src
	}
}

// Hints decides the method's four hints, each from the strongest source
// that speaks to it:
//
//  1. idempotency_level: NO_SIDE_EFFECTS is read-only (so not destructive,
//     and idempotent); IDEMPOTENT is idempotent and, since it is not
//     NO_SIDE_EFFECTS, not read-only.
//  2. the google.api.http rule's verb, as HTTP defines it (RFC 9110
//     9.2): GET is safe and idempotent; DELETE destructive and
//     idempotent; PUT idempotent and not read-only; PATCH not read-only.
//     POST and custom verbs promise nothing. A GET whose name's verb
//     writes, or that returns a long-running operation, is only
//     idempotent: a contradiction is resolved the safe way.
//  3. the verb table (verbs.go): Reads, Adds, Changes, Removes, Controls.
//  4. the conservative default: not read-only, destructive, not
//     idempotent.
//
// openWorldHint is true: the backend is a system of its own, which the
// gateway cannot vouch is closed; only the owners' option says otherwise.
func (a *Method) Hints() (Hints, HintSources) {
	var ro, de, id hint
	// A read-only method changes nothing, so it is not destructive and
	// calling it twice is harmless.
	readOnly := func(src Source) {
		ro.set(true, src)
		de.set(false, src)
		id.set(true, src)
	}
	switch a.idempotency {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS:
		readOnly(FromIdempotencyLevel)
	case descriptorpb.MethodOptions_IDEMPOTENT:
		ro.set(false, FromIdempotencyLevel)
		id.set(true, FromIdempotencyLevel)
	}
	switch a.httpVerb {
	case "GET":
		if a.Effect == Reads || a.Effect == Unknown && !a.longRunning {
			readOnly(FromHTTPRule)
		} else {
			// A GET whose verb writes, or that starts a long-running
			// operation (Vertex AI's RestoreDatasetVersion), is declared
			// idempotent but not trusted to change nothing.
			id.set(true, FromHTTPRule)
		}
	case "DELETE":
		ro.set(false, FromHTTPRule)
		de.set(true, FromHTTPRule)
		id.set(true, FromHTTPRule)
	case "PUT":
		ro.set(false, FromHTTPRule)
		id.set(true, FromHTTPRule)
	case "PATCH":
		ro.set(false, FromHTTPRule)
	}
	src := FromVerbTable
	if a.fromStructure {
		src = FromStructure
	}
	switch a.Effect {
	case Reads:
		readOnly(src)
	case Adds:
		ro.set(false, src)
		de.set(false, src)
		// A second create of a named thing fails and changes nothing; a
		// second flush or grant finds nothing to do; a second append or
		// send adds again.
		id.set(idempotentAdds[a.Verb] || keyedAdds[a.Verb] && a.keyed, src)
	case Starts:
		ro.set(false, src)
		de.set(false, src)
		// A second resume finds it running; a second start or begin
		// often starts another run.
		id.set(idempotentAdds[a.Verb], src)
	case Changes:
		ro.set(false, src)
		de.set(true, src)
		// Setting a value twice leaves it as once; a relative change
		// changes again.
		id.set(!relativeVerbs[a.Verb], src)
	case Controls:
		ro.set(false, src)
		de.set(true, src)
		id.set(stateVerbs[a.Verb], src)
	case Removes:
		ro.set(false, src)
		de.set(true, src)
		// A second delete or revoke finds it gone.
		id.set(true, src)
	}
	ro.set(false, FromDefault)
	de.set(true, FromDefault)
	id.set(false, FromDefault)
	if ro.v {
		// A stronger source said read-only while a weaker one guessed
		// destructive: a read-only tool is never destructive.
		de.v = false
	}
	return Hints{ReadOnly: ro.v, Destructive: de.v, Idempotent: id.v, OpenWorld: true},
		HintSources{ReadOnly: ro.src, Destructive: de.src, Idempotent: id.src, OpenWorld: FromDefault}
}

// httpVerb is the verb of a rule's primary binding, "" for none.
func httpVerb(r *annotations.HttpRule) string {
	switch r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET"
	case *annotations.HttpRule_Put:
		return "PUT"
	case *annotations.HttpRule_Post:
		return "POST"
	case *annotations.HttpRule_Delete:
		return "DELETE"
	case *annotations.HttpRule_Patch:
		return "PATCH"
	case *annotations.HttpRule_Custom:
		return r.GetCustom().GetKind()
	}
	return ""
}
