package descriptors

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestHeldLog: records kept until release are replayed in order with
// their logger's attributes (a group qualifying the keys after it),
// filtered by the handler's level; records past the bound are counted;
// records after release go straight through.
func TestHeldLog(t *testing.T) {
	h := new(heldLog)
	l := h.logger()
	l.Debug("below the level")
	l.With("file", "a.proto").Info("first")
	l.WithGroup("cache").Warn("second", "dir", "/x")
	for range maxHeldRecords {
		l.Info("filler")
	}
	var b bytes.Buffer
	h.release(slog.NewTextHandler(&b, nil))
	l.Info("after")
	out := b.String()
	for _, want := range []string{`msg=first file=a.proto`, `msg=second cache.dir=/x`, `dropped=3`, `msg=after`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "below the level") {
		t.Error("a record below the handler's level was logged")
	}
	if i, j := strings.Index(out, "msg=first"), strings.Index(out, "msg=second"); i > j {
		t.Error("records replayed out of order")
	}
	if n := strings.Count(out, "msg=filler"); n != maxHeldRecords-3 {
		t.Errorf("%d fillers, want %d (the bound, less the three records before, the debug one held too)", n, maxHeldRecords-3)
	}
}
