package describe

// Kind is a method's standard kind (AIP-130): what it does to the
// resource it names, whatever its verb is called.
type Kind uint8

const (
	// Custom is any other method (AIP-136), and a method whose name
	// starts with no verb this package knows.
	Custom Kind = iota
	// Get reads one resource (AIP-131).
	Get
	// List reads a collection (AIP-132), and also a Get whose object is
	// plural (GetUsers) or a Search.
	List
	// Create adds a resource (AIP-133; Compute's Insert).
	Create
	// Update changes one (AIP-134; Patch, Set...).
	Update
	// Delete removes one (AIP-135).
	Delete
)

var kindNames = [...]string{"custom", "get", "list", "create", "update", "delete"}

func (k Kind) String() string { return kindNames[k] }

// Effect is what a kind of verb does to the world, as the four MCP hints
// say it. The table below is the documented source of the hints for a
// method that declares nothing (no idempotency_level, no HTTP rule whose
// verb says it).
type Effect uint8

const (
	// Unknown: a verb this package has no entry for. The hints are the
	// conservative default: not read-only, destructive, not idempotent.
	Unknown Effect = iota
	// Reads: no side effects (Get, List, Search, Count, Check...):
	// read-only, so neither destructive nor anything but idempotent.
	Reads
	// Adds: creates something new next to what exists (Create, Insert,
	// Add, Import, Publish, Send...): not destructive, and not
	// idempotent (twice makes two).
	Adds
	// Changes: rewrites what exists (Update, Patch, Set, Rename,
	// Resize...): destructive, since the old value is gone, and not
	// idempotent, since a change may be relative.
	Changes
	// Removes: deletes (Delete, Remove, Drop, Purge...): destructive.
	// Not idempotent: a name does not say whether a second call finds
	// nothing more to remove (DeleteThing) or removes another
	// (DeleteOldest); an HTTP DELETE rule declares it.
	Removes
	// Controls: changes a resource's state or runs something (Stop,
	// Start, Reset, Cancel, Deploy, Undeploy, Terminate, Signal...):
	// destructive and not idempotent.
	Controls
)

var effectNames = [...]string{"unknown", "reads", "adds", "changes", "removes", "controls"}

func (e Effect) String() string { return effectNames[e] }

// verbTable lists the verbs of each Effect; a verb is in one list only
// (TestVerbTable).
var verbTable = []struct {
	effect Effect
	verbs  []string
}{
	{Reads, []string{
		"get", "list", "search", "count", "describe", "fetch", "read", "lookup", "look", "query", "find",
		"check", "test", "validate", "verify", "preview", "estimate", "explain", "predict", "retrieve",
		"show", "view", "watch", "browse", "scan", "inspect", "peek", "summarize", "diff", "compare",
		"calculate", "compute", "evaluate", "analyze", "download", "match", "aggregated", "translate",
		"detect", "classify", "recognize", "tokenize", "embed", "rank", "recommend", "stat",
		"head", "exists", "infer", "ping", "enumerate",
	}},
	{Adds, []string{
		"create", "insert", "add", "import", "upload", "publish", "append", "register", "send", "post",
		"copy", "clone", "duplicate", "snapshot", "backup", "attach", "invite", "allocate", "reserve",
		"provision", "write", "put", "enqueue", "push", "emit", "record", "log", "report", "submit",
		"request", "issue", "grant", "bind", "link", "connect", "subscribe", "follow", "tag", "label",
		"fork", "branch", "install", "upsert", "new", "make", "build",
		"mint", "sign", "commit", "acquire", "lease", "claim", "export",
	}},
	{Changes, []string{
		"update", "patch", "set", "modify", "edit", "change", "replace", "rename", "move", "resize",
		"scale", "mutate", "configure", "assign", "apply", "adjust", "merge", "reorder", "sort",
		"rotate", "renew", "extend", "migrate", "upgrade", "downgrade", "convert", "transfer",
		"reassign", "increase", "decrease", "expand", "shrink", "promote", "demote", "mark", "flag",
		"toggle", "override", "pin", "unpin", "lock", "unlock", "enable", "disable", "activate",
		"deactivate", "acknowledge", "ack", "respond", "reply", "complete", "finish", "finalize",
		"redact", "annotate", "rollback", "revert", "restore", "undelete", "recover", "repair", "fix",
		"heal", "sync", "synchronize", "refresh", "reload", "reindex", "rebuild", "recreate",
		"reconcile", "seek", "abandon", "approve", "reject", "accept", "decline", "confirm", "certify",
		"tune", "train", "fit", "optimize", "compact", "consolidate", "deprecate",
	}},
	{Removes, []string{
		"delete", "remove", "drop", "purge", "destroy", "erase", "wipe", "truncate", "clear", "evict",
		"expunge", "discard", "prune", "unregister", "deregister", "uninstall", "unbind", "unlink",
		"unsubscribe", "untag", "unlabel", "release", "revoke", "detach", "disconnect", "unassign",
		"cleanup", "trash", "forget", "deallocate", "dismiss",
	}},
	{Controls, []string{
		"start", "stop", "restart", "reboot", "reset", "cancel", "abort", "deploy", "undeploy",
		"suspend", "resume", "pause", "unpause", "terminate", "kill", "halt", "shutdown", "failover",
		"signal", "trigger", "run", "execute", "launch", "invoke", "call", "fire", "notify", "poll",
		"pull", "receive", "dispatch", "schedule", "reschedule", "retry", "rerun", "replay", "backfill",
		"drain", "cordon", "uncordon", "evacuate", "perform", "begin", "end", "open", "close",
		"freeze", "unfreeze", "hibernate", "wake", "heartbeat", "expire", "handle", "process", "serve",
		"route", "redirect", "switch", "transition", "advance", "skip", "escalate", "interrupt",
		"quiesce", "standby", "power", "boot", "unsuspend", "reactivate", "simulate",
	}},
}

// verbEffects is verbTable by verb.
var verbEffects = func() map[string]Effect {
	m := make(map[string]Effect)
	for _, row := range verbTable {
		for _, v := range row.verbs {
			m[v] = row.effect
		}
	}
	return m
}()

// kindOf is the standard kind of a verb, before its object is known.
func kindOf(verb string) Kind {
	switch verb {
	case "get", "describe", "fetch", "read", "lookup", "retrieve", "view", "show", "inspect":
		return Get
	case "list", "aggregated", "search", "browse", "enumerate", "query", "find", "count":
		return List
	case "create", "insert", "add", "new", "make", "register", "upload", "import":
		return Create
	case "update", "patch", "set", "modify", "edit", "change", "replace", "upsert":
		return Update
	case "delete", "remove", "drop", "purge", "destroy", "erase", "unregister", "deregister":
		return Delete
	}
	return Custom
}

// modifiers are leading words that qualify the verb after them: BatchGet,
// BulkInsert, AsyncCreate, StreamingPull, TryLock.
var modifiers = map[string]string{
	"batch": "several at once", "bulk": "several at once", "async": "asynchronously",
	"streaming": "as a stream", "stream": "as a stream", "try": "if it can", "multi": "several at once",
	"mass": "several at once",
}

// prepositions link a verb's own object to the resource it acts on: a
// disk is attached *to* an instance, detached *from* one, its machine type
// is set *of* one.
func preposition(verb string) string {
	switch verb {
	case "attach", "add", "insert", "append", "bind", "link", "connect", "assign", "grant", "deploy",
		"apply", "publish", "send", "post", "push", "upload", "import", "write", "subscribe", "submit",
		"move", "copy", "migrate", "transfer", "promote", "signal", "enqueue", "install", "tag", "label", "invite":
		return "to"
	case "detach", "remove", "delete", "unbind", "unlink", "disconnect", "revoke", "undeploy",
		"uninstall", "drop", "purge", "pull", "receive", "export", "download", "read", "fetch", "untag",
		"unlabel", "evict", "unassign", "unsubscribe":
		return "from"
	case "search", "query", "find", "scan", "match", "predict", "explain", "evaluate", "generate",
		"compute", "calculate", "estimate", "count", "run", "execute", "invoke", "call", "trigger",
		"create", "start", "stop", "cancel", "pause", "resume", "reset", "restart", "simulate", "perform",
		"report", "record", "log", "respond":
		return "on"
	}
	return "of"
}
