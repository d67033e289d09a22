package gateway

import "runtime/debug"

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
