package scopes

import (
	"slices"
	"strings"
	"sync"
)

// Lists that show what the caller may call (Options.Scopes.ListVisibleOnly).
//
// A tool needs the scopes its catalog resolved for it (Resolve); a
// catalog has few distinct sets of them, however many tools (every tool
// of a service, every write of an API, share one). What a caller may see
// is therefore decided by which of those sets its token holds: a bit per
// set, the caller's view key. Each key's list is a subset of the
// catalog's (mcp.ToolList.Subset: its pages, no schema encoded again),
// made at the first tools/list of a caller with that key and kept with
// the catalog, up to MaxKeptViews; search_tools filters its matches by
// the same bits and keeps its answers under the key. The call path does
// not change: a call of a hidden tool is authorized as before and
// refused with the scope it lacks, so a client can still step up.

// MaxKeptViews bounds the lists a catalog keeps, one per distinct view
// key: callers' tokens come in few shapes, but a token's scopes are the
// authorization server's to choose, so past this many a view's list is
// made for its request and not kept.
const MaxKeptViews = 64

// Sets are a list's distinct tool scope sets, and each tool's.
type Sets struct {
	sets [][]string
	// of[i] is the index in sets of the i-th tool's scopes, -1 for a
	// tool that needs none.
	of []int
}

// Index finds the distinct scope sets of n tools, need(i) being what the
// i-th needs (sorted, as Resolve leaves them; nil for nothing). It runs
// once a list's tools are final.
func Index(n int, need func(i int) []string) Sets {
	ss := Sets{of: make([]int, n)}
	seen := make(map[string]int)
	for i := range n {
		s := need(i)
		if len(s) == 0 {
			ss.of[i] = -1
			continue
		}
		k := strings.Join(s, " ")
		j, ok := seen[k]
		if !ok {
			j = len(ss.sets)
			seen[k] = j
			ss.sets = append(ss.sets, s)
		}
		ss.of[i] = j
	}
	return ss
}

// Len is the number of distinct sets: 0 when no tool needs a scope.
func (ss Sets) Len() int { return len(ss.sets) }

// View is the view of a caller whose token holds the scope sets holds
// accepts: key names it ("" when the caller sees every tool), keep says
// which tools (by their index given to Index) it shows, nil for all.
func (ss Sets) View(holds func(scopes []string) bool) (key string, keep func(i int) bool) {
	if len(ss.sets) == 0 {
		return "", nil
	}
	bits := make([]byte, (len(ss.sets)+7)/8)
	all := true
	for n, s := range ss.sets {
		if holds(s) {
			bits[n/8] |= 1 << (n % 8)
		} else {
			all = false
		}
	}
	if all {
		return "", nil
	}
	of := ss.of
	return string(bits), func(i int) bool {
		n := of[i]
		return n < 0 || bits[n/8]&(1<<(n%8)) != 0
	}
}

// Views are the lists (of type L) a catalog keeps by view key, at most
// MaxKeptViews of them. The zero value is empty and ready; a Views must
// not be copied after first use.
type Views[L any] struct {
	mu sync.Mutex
	m  map[string]L
}

// Get is the list kept for key, if any.
func (v *Views[L]) Get(key string) (L, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, ok := v.m[key]
	return l, ok
}

// Keep keeps l for key unless another list was kept for it meanwhile,
// and returns the one kept (l when the Views are full).
func (v *Views[L]) Keep(key string, l L) L {
	v.mu.Lock()
	defer v.mu.Unlock()
	if kept, ok := v.m[key]; ok {
		return kept
	}
	if len(v.m) < MaxKeptViews {
		if v.m == nil {
			v.m = make(map[string]L)
		}
		v.m[key] = l
	}
	return l
}

// Same reports whether the tools of b that a has too (by name) need the
// same scopes in both, need(t) being what t needs: when lists depend on
// the caller, a change of a tool's scopes changes who sees it, so it is
// a change of the list (a tool added or gone is one anyway).
func Same[T any](a, b map[string]T, need func(T) []string) bool {
	for name, t := range b {
		if o, ok := a[name]; ok && !slices.Equal(need(o), need(t)) {
			return false
		}
	}
	return true
}
