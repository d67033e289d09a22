package gateway

import (
	"runtime/debug"
	"testing"
)

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
	warm := p.begin(compileGCPercent)
	if percent != compileGCPercent {
		t.Errorf("during a build and a warm-up: %d, want %d", percent, compileGCPercent)
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
	later := p.begin(compileGCPercent)
	done()
	later()
	if percent != 200 {
		t.Errorf("changed to 200 during a build: %d after it, want 200", percent)
	}
}

// TestGCPercentReads: gcPercent reads the runtime's target.
func TestGCPercentReads(t *testing.T) {
	prev := debug.SetGCPercent(77)
	got := gcPercent()
	debug.SetGCPercent(prev)
	if got != 77 {
		t.Fatalf("gcPercent: %d, want 77", got)
	}
}

// TestPaceNeedsOption: without Options.PaceGC the gateway leaves the
// collector alone.
func TestPaceNeedsOption(t *testing.T) {
	before := gcPercent()
	done := (&Gateway{opts: Options{}}).pace(compileGCPercent)
	if got := gcPercent(); got != before {
		t.Errorf("pace without PaceGC changed GOGC from %d to %d", before, got)
	}
	done()
}
