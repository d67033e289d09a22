package mcp

import (
	"testing"
	"unsafe"
)

// TestMethodTable: every revision has a bit of the revision sets, and
// every row names a method once, exists in some revision, and is served
// by a handler of its kind (a notification's or a request's, a task
// method's by a task handler) that serves no other row, so that code
// comparing rows tells every method apart. The notifications the server
// sends are named once and are not methods a client may send.
func TestMethodTable(t *testing.T) {
	if bits := 8 * int(unsafe.Sizeof(revisions(0))); len(supportedVersions) > bits {
		t.Fatalf("%d supported revisions do not fit the %d bits of a revision set", len(supportedVersions), bits)
	}
	seen := map[string]bool{}
	servedBy := map[handler]string{}
	for _, mi := range methodTable {
		if mi.handler != notServed {
			if other, ok := servedBy[mi.handler]; ok {
				t.Errorf("%s and %s: one handler, %d", other, mi.name, mi.handler)
			}
			servedBy[mi.handler] = mi.name
		}
		if isTask := mi.handler >= serveTasksGet && mi.handler <= serveTasksUpdate; isTask != mi.task {
			t.Errorf("%s: task %v, but its handler is %d", mi.name, mi.task, mi.handler)
		}
		if seen[mi.name] {
			t.Errorf("%s: two rows", mi.name)
		}
		seen[mi.name] = true
		if mi.revisions == 0 {
			t.Errorf("%s: exists in no revision", mi.name)
		}
		if isNotification := mi.handler == onInitialized || mi.handler == onCancelled; isNotification != mi.notification {
			t.Errorf("%s: notification %v, but its handler is %d", mi.name, mi.notification, mi.handler)
		}
		if got := methodsByName[mi.name]; got == nil || got.name != mi.name {
			t.Errorf("%s: not indexed by name", mi.name)
		}
	}
	for _, n := range outgoingNotifications {
		if seen[n] {
			t.Errorf("%s: sent by the server and a row of the method table", n)
		}
		seen[n] = true
	}
	for _, v := range supportedVersions {
		if !allRevisions.has(v) {
			t.Errorf("allRevisions lacks %s", v)
		}
	}
	if first := revs(Version20251125, Version20260728).first(); first != Version20251125 {
		t.Errorf("first = %s, want %s", first, Version20251125)
	}
}
