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
	// Reset, Cancel, Deploy, Terminate, Signal, Execute...): destructive.
	// Idempotent when the verb moves a resource to a state a second call
	// finds it in (Stop, Pause, Cancel); not when each call runs
	// something again (Restart, Execute, Signal).
	Controls
	// Starts: starts or resumes something (Start, Resume, Begin, Launch,
	// Wake): nothing existing is lost, so not destructive; not
	// idempotent, since a start often makes a new run (a workflow, a
	// recording, a transaction).
	Starts
)

var effectNames = [...]string{"unknown", "reads", "adds", "changes", "removes", "controls", "starts"}

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
		// Predicates and other reads of any domain: HasCollection,
		// IsAllowed, WaitExecution (it waits on, and reads, an
		// operation), SelectGrant, Scroll, ExportBulkRelationships,
		// ReflectSchema, cryptographic computations (Encrypt, Sign).
		"has", "is", "can", "should", "contains", "wait", "select", "scroll", "discover", "reflect",
		"range", "dump", "export", "encrypt", "decrypt", "sign", "wrap", "unwrap", "hash", "checksum",
	}},
	{Adds, []string{
		"create", "insert", "add", "upload", "publish", "append", "register", "send", "post",
		"copy", "clone", "duplicate", "snapshot", "backup", "attach", "invite", "allocate", "reserve",
		"provision", "enqueue", "push", "emit", "record", "log", "report", "submit",
		"request", "issue", "grant", "bind", "link", "connect", "tag", "label",
		"fork", "branch", "install", "new", "make", "build",
		"mint", "acquire", "lease", "claim",
		// Writes that lose nothing: a flush or a load persists or caches
		// what exists, a checkpoint or a prepared snapshot is new, a
		// raised event or a forwarded one is added, a keep-alive renews.
		"lock", "flush", "load", "keep", "defragment", "defrag", "checkpoint", "prepare", "raise", "forward", "warm",
		"prefetch",
	}},
	{Changes, []string{
		"update", "patch", "set", "modify", "edit", "change", "replace", "rename", "move", "resize",
		"scale", "mutate", "configure", "assign", "apply", "adjust", "merge", "reorder", "sort",
		"rotate", "renew", "extend", "migrate", "upgrade", "downgrade", "convert", "transfer",
		"reassign", "increase", "decrease", "shrink", "promote", "demote", "mark", "flag",
		"toggle", "override", "pin", "unpin", "unlock", "enable", "disable", "activate",
		"deactivate", "acknowledge", "ack", "respond", "reply", "complete", "finish", "finalize",
		"redact", "annotate", "rollback", "revert", "restore", "undelete", "recover", "repair", "fix",
		"heal", "sync", "synchronize", "refresh", "reload", "reindex", "rebuild", "recreate",
		"reconcile", "seek", "abandon", "approve", "reject", "accept", "decline", "confirm", "certify",
		"tune", "train", "fit", "optimize", "compact", "consolidate", "deprecate",
		// Writes that replace what is there: a put, a write, a save or an
		// upsert overwrites the stored value (WriteSchema replaces the
		// whole schema); an alter changes a definition; a commit makes
		// pending changes permanent.
		"put", "write", "save", "store", "upsert", "alter", "commit", "import",
	}},
	{Removes, []string{
		"delete", "remove", "drop", "purge", "destroy", "erase", "wipe", "truncate", "clear", "evict",
		"expunge", "discard", "prune", "unregister", "deregister", "uninstall", "unbind", "unlink",
		"unsubscribe", "untag", "unlabel", "release", "revoke", "detach", "disconnect", "unassign",
		"cleanup", "trash", "forget", "deallocate", "dismiss",
	}},
	{Controls, []string{
		"stop", "restart", "reboot", "reset", "cancel", "abort", "deploy", "undeploy",
		"suspend", "pause", "terminate", "kill", "halt", "shutdown", "failover",
		"signal", "trigger", "run", "execute", "invoke", "call", "fire", "notify", "poll",
		"pull", "receive", "dispatch", "schedule", "reschedule", "retry", "rerun", "replay", "backfill",
		"drain", "cordon", "evacuate", "perform", "end", "close",
		"freeze", "hibernate", "heartbeat", "expire", "handle", "process", "serve",
		"route", "redirect", "switch", "transition", "advance", "skip", "escalate", "interrupt",
		"quiesce", "standby", "power", "simulate", "resume", "unpause", "wake", "unsuspend", "reactivate",
		"unfreeze", "balance", "rebalance",
	}},
	{Starts, []string{
		"start", "launch", "begin", "open", "boot", "uncordon",
	}},
}

// stateVerbs are Controls that move a resource to a state: a second
// call finds it there, so they are idempotent.
var stateVerbs = map[string]bool{
	"stop": true, "cancel": true, "abort": true, "suspend": true, "pause": true, "terminate": true, "halt": true,
	"shutdown": true, "freeze": true, "hibernate": true, "cordon": true, "drain": true, "quiesce": true,
	"standby": true, "undeploy": true, "close": true, "end": true, "expire": true, "deploy": true,
	"resume": true, "unpause": true, "wake": true, "unsuspend": true, "reactivate": true, "unfreeze": true,
}

// relativeVerbs are Changes whose second call changes again (a relative
// change, or one that makes a new version each time): not idempotent.
var relativeVerbs = map[string]bool{
	"increase": true, "decrease": true, "increment": true, "decrement": true, "extend": true, "renew": true,
	"rotate": true, "adjust": true, "transfer": true, "train": true, "tune": true, "fit": true, "optimize": true,
	"rebuild": true, "recreate": true, "reindex": true, "merge": true, "reorder": true,
	"seek": true, "import": true,
}

// keyedAdds are Adds that are idempotent when the request names what
// they add: a create by a caller-chosen name or ID fails, changing
// nothing, the second time.
var keyedAdds = map[string]bool{
	"create": true, "add": true, "register": true, "new": true, "make": true, "install": true, "provision": true,
	"reserve": true,
}

// idempotentAdds are Adds that are idempotent whatever the request: a
// second flush, grant or lock finds nothing more to do.
var idempotentAdds = map[string]bool{
	"flush": true, "load": true, "defragment": true, "defrag": true, "warm": true, "prefetch": true, "grant": true,
	"bind": true, "link": true, "attach": true, "tag": true, "label": true, "connect": true, "lock": true,
	"acquire": true, "claim": true, "prepare": true, "keep": true, "uncordon": true,
}

// verbAliases are the short forms API names use for verbs: Exec,
// AllocTimestamp, CalcDistance.
var verbAliases = map[string]string{
	"exec": "execute", "alloc": "allocate", "calc": "calculate", "init": "initialize", "del": "delete",
	"rm": "remove", "gen": "generate", "mk": "make", "ls": "list", "desc": "describe",
}

// phrasalVerbs are verbs a name writes as one word that English writes
// as two: LookupResources looks up resources, Shutdown shuts down.
var phrasalVerbs = map[string]string{
	"lookup": "look up", "shutdown": "shut down", "cleanup": "clean up", "backup": "back up", "setup": "set up",
	"rollback": "roll back", "rollout": "roll out", "checkout": "check out", "checkin": "check in",
	"login": "log in", "logout": "log out", "signin": "sign in", "signup": "sign up", "signout": "sign out",
	"startup": "start up", "teardown": "tear down", "writeback": "write back", "failover": "fail over",
	"warmup": "warm up", "pickup": "pick up",
}

// qualifierWords are adjectives a name puts before its verb to qualify
// it (RawPredict, SoftDeleteNamespace, ExperimentalReflectSchema,
// SubtleEncrypt). Any other word before the verb is a noun: what the
// verb acts on, in noun-verb order (etcd's UserAdd, RoleGrantPermission).
var qualifierWords = map[string]bool{
	"raw": true, "soft": true, "hard": true, "force": true, "forced": true, "dry": true, "direct": true, "full": true,
	"partial": true, "subtle": true, "manual": true, "auto": true, "server": true, "client": true, "local": true,
	"remote": true, "global": true, "internal": true, "external": true, "legacy": true, "safe": true,
	"unsafe": true, "quick": true, "fast": true, "lazy": true, "deep": true, "shallow": true, "incremental": true,
	"conditional": true, "atomic": true, "custom": true, "advanced": true, "simple": true, "basic": true,
	"experimental": true, "alpha": true, "beta": true, "preview": true, "hybrid": true, "smart": true,
	"recursive": true, "sync": true, "bidi": true, "unary": true, "admin": true, "self": true,
}

// reportNouns are nouns a method named by a noun alone returns: Status,
// ImageFsInfo, ContainerStats, Version. Such a method reads.
var reportNouns = map[string]bool{
	"status": true, "statuses": true, "info": true, "information": true, "stats": true, "statistics": true,
	"metrics": true, "usage": true, "version": true, "versions": true, "health": true, "capabilities": true,
	"config": true, "configuration": true, "settings": true, "details": true, "summary": true, "state": true,
	"progress": true, "hash": true, "platform": true, "metadata": true, "quota": true, "limits": true,
	"size": true, "count": true, "schema": true, "properties": true, "inventory": true, "diagnostics": true,
	"report": true, "overview": true, "readiness": true, "liveness": true,
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
