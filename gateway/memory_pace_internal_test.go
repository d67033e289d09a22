package gateway

import "testing"

// TestPace: the collector's target is lowered while builds run, to the
// lowest any of the overlapping ones asks for, restored after the last,
// and never touched when someone chose another than the default, or
// changed it while the builds ran.
func TestPace(t *testing.T) {
	percent := int64(100)
	sets := 0
	p := &pacer{get: func() int64 { return percent }, set: func(v int) int {
		prev := percent
		percent = int64(v)
		sets++
		return int(prev)
	}}
	build := p.begin(buildGCPercent)
	if percent != buildGCPercent {
		t.Fatalf("during a build: %d, want %d", percent, buildGCPercent)
	}
	warm := p.begin(warmGCPercent)
	if percent != warmGCPercent {
		t.Errorf("during a build and a warm-up: %d, want %d", percent, warmGCPercent)
	}
	another := p.begin(buildGCPercent)
	warm()
	warm() // twice is once
	if percent != buildGCPercent {
		t.Errorf("after the warm-up, two builds running: %d, want %d", percent, buildGCPercent)
	}
	build()
	if percent != buildGCPercent {
		t.Errorf("while a build still runs: %d, want %d", percent, buildGCPercent)
	}
	another()
	if percent != 100 || sets != 4 {
		t.Errorf("after all: %d after %d changes, want 100 after 4", percent, sets)
	}

	// An operator's GOGC is left alone.
	percent, sets = 400, 0
	p.begin(buildGCPercent)()
	if percent != 400 || sets != 0 {
		t.Errorf("GOGC=400: %d after %d changes, want 400 untouched", percent, sets)
	}

	// A change made while a build ran is kept, and not undone by builds
	// that start or end later.
	percent, sets = 100, 0
	done := p.begin(buildGCPercent)
	percent = 200
	later := p.begin(warmGCPercent)
	done()
	later()
	if percent != 200 {
		t.Errorf("changed to 200 during a build: %d after it, want 200", percent)
	}
}

// TestGCPercentReads: gcPercent reads the runtime's target.
func TestGCPercentReads(t *testing.T) {
	if got := gcPercent(); got < 0 {
		t.Fatalf("gcPercent: %d", got)
	}
}
