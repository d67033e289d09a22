package gateway

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The collector's targets (GOGC) while catalogs are built; see pace.
// Compiling a discovery's tools and the background warm-up of a
// search-mode catalog's schemas, whose short-lived values mix most with
// what the catalog keeps, collect four times as often as by default;
// building a typed catalog's schemas before it is listed, twice (four
// times made a typed restart of the googleapis catalog 2 s slower, for
// little memory: docs/scale.md). Reading the descriptors is not paced:
// it waits on the network, and at the default pace the values it keeps
// are built after the compiler's garbage is gone (reflection's pool).
const (
	buildGCPercent   = 50
	compileGCPercent = 25
)

// pacer lowers the collector's target while builds run; see pace.
type pacer struct {
	// get reads the target, set changes it (debug.SetGCPercent).
	get func() int64
	set func(int) int

	mu sync.Mutex
	// active counts the builds running, by the target each asked for.
	active map[int]int
	// current is the target the pacer set, 0 when it set none (and so
	// restores none).
	current int
}

var pacing = &pacer{get: gcPercent, set: debug.SetGCPercent}

// pace has the garbage collector run more often, at target percent, until
// done is called, while a discovery's tools or a catalog's schemas are
// built. Those builds allocate several times what the catalog keeps in
// short-lived values; collected at the default pace, the values that stay
// end up spread over memory pages the garbage also filled, and a page
// holding one live value is never returned. Collected more often, the
// garbage's slots are reused sooner and what stays is denser: on the
// googleapis catalog the heap in use once built went from 614-630 to 549
// MiB for a live heap of 391, and the default mode's RSS once settled
// from 633 to 571 MiB (docs/scale.md), with restarts as fast. It changes
// the target only from the default (100), restores it when the last
// build running ends, and leaves it alone if someone else changed it
// meanwhile. Builds overlap (several backends, a refresh during a
// warm-up): the lowest target asked for holds until none runs.
//
// Only with Options.PaceGC; otherwise done does nothing.
func (g *Gateway) pace(target int) (done func()) {
	if !g.opts.PaceGC {
		return func() {}
	}
	return pacing.begin(target)
}

func (p *pacer) begin(target int) (done func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active == nil {
		p.active = make(map[int]int)
	}
	p.active[target]++
	p.apply()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.active[target]--; p.active[target] == 0 {
				delete(p.active, target)
			}
			p.apply()
		})
	}
}

// apply sets the lowest target asked for, or the default when none is,
// unless the target was changed by someone else. p.mu is held.
func (p *pacer) apply() {
	want := 100
	for t := range p.active {
		want = min(want, t)
	}
	have := int(p.get())
	switch {
	case p.current == 0 && have != 100:
		return // not the default: someone chose it
	case p.current != 0 && have != p.current:
		p.current = 0 // changed meanwhile: theirs now
		return
	}
	if have != want {
		p.set(want)
	}
	if p.current = want; want == 100 {
		p.current = 0
	}
}

// gcPercent is the collector's current target, without changing it.
func gcPercent() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64())
}

// releaseMemory returns to the operating system, in the background, the
// memory that building a catalog freed. Discovering a large estate leaves
// several times the catalog's own size as garbage (the compiler's syntax
// trees and descriptors, the schemas' intermediate forms, the catalog it
// replaces): on the googleapis catalog the process's RSS stood at twice
// its live heap once ready, and the runtime's scavenger returns such
// memory only over minutes. One forced collection per new catalog costs
// well under a second of CPU there and nothing on an unchanged refresh,
// which builds no catalog. At most one runs at a time, and Close waits
// for it.
func (g *Gateway) releaseMemory() {
	if !g.releasing.CompareAndSwap(false, true) {
		return
	}
	g.wg.Go(func() {
		defer g.releasing.Store(false)
		debug.FreeOSMemory()
	})
}
