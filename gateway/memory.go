package gateway

import (
	"encoding/json"
	"runtime/debug"
)

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

// packSchemas copies the schemas forceSchemas built into one block and
// points the results at the copies. Discovery builds each schema among
// many times its size of short-lived values (descriptors walked, nodes,
// encodings tried and dropped), so the schemas end up scattered over
// memory pages that, once that garbage is collected, hold little else but
// cannot be returned: on the googleapis catalog the heap in use stood at
// twice the live heap. Packed, the pages the scattered schemas held are
// returned with the garbage. Tools sharing a schema (the same bytes, as
// the compile cache shares them) keep sharing its copy.
func packSchemas(built []builtSchemas) {
	type key struct {
		data *byte
		n    int
	}
	sizes := make(map[key]bool)
	total := 0
	for _, b := range built {
		for _, s := range [...]json.RawMessage{b.in, b.out} {
			if len(s) == 0 {
				continue
			}
			if k := (key{&s[0], len(s)}); !sizes[k] {
				sizes[k] = true
				total += len(s)
			}
		}
	}
	block := make([]byte, 0, total)
	copies := make(map[key]json.RawMessage, len(sizes))
	pack := func(s json.RawMessage) json.RawMessage {
		if len(s) == 0 {
			return s
		}
		k := key{&s[0], len(s)}
		c, ok := copies[k]
		if !ok {
			start := len(block)
			block = append(block, s...)
			c = block[start:len(block):len(block)]
			copies[k] = c
		}
		return c
	}
	for i := range built {
		built[i].in = pack(built[i].in)
		built[i].out = pack(built[i].out)
	}
}
