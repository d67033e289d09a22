package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
)

// resultFlags are the result budget and the store of whole results
// (gateway/budget.go).
type resultFlags struct {
	maxBytes     int
	ttl          time.Duration
	storeBytes   int64
	storeEntries int
	// The share of the store one principal may fill; 0 is half of it.
	storeBytesPerPrin   int64
	storeEntriesPerPrin int
}

func (r *resultFlags) register(fs *flag.FlagSet) {
	limitVar(fs, &r.maxBytes, "max-result-bytes", gateway.DefaultMaxResultBytes, true, fmt.Sprintf("result budget: most bytes of JSON in one tool result; a larger result is cut to fit (long arrays keep their first elements, long strings are shortened, \"truncated\" lists the cuts) and kept whole as a resource for --result-ttl; at least %d; unlimited: no budget", gateway.MinMaxResultBytes))
	limitVar(fs, &r.ttl, "result-ttl", results.DefaultTTL, false, "how long a result cut to the budget stays readable whole (resources/read on its resource_link)")
	limitVar(fs, &r.storeBytes, "result-store-bytes", results.DefaultMaxBytes, false, "most bytes of whole results kept at once (the oldest go first); a larger result is cut but not kept")
	limitVar(fs, &r.storeEntries, "result-store-entries", results.DefaultMaxEntries, false, "most whole results kept at once (the oldest go first)")
	limitVar(fs, &r.storeBytesPerPrin, "result-store-bytes-per-principal", 0, true, "most bytes of whole results one authenticated principal keeps, all its sessions together: past it its own oldest go first, so one cannot push out another's; 0: half of --result-store-bytes")
	limitVar(fs, &r.storeEntriesPerPrin, "result-store-entries-per-principal", 0, true, "most whole results one authenticated principal keeps, all its sessions together; 0: half of --result-store-entries")
}

func (r *resultFlags) check() error {
	if r.maxBytes != gateway.Off && r.maxBytes < gateway.MinMaxResultBytes {
		return fmt.Errorf("--max-result-bytes: want at least %d bytes, or \"unlimited\" for no budget, got %d", gateway.MinMaxResultBytes, r.maxBytes)
	}
	if r.ttl <= 0 {
		return fmt.Errorf("--result-ttl: want a positive duration, got %s", r.ttl)
	}
	if r.storeBytes <= 0 {
		return fmt.Errorf("--result-store-bytes: want a positive number of bytes, got %d", r.storeBytes)
	}
	if r.storeEntries <= 0 {
		return fmt.Errorf("--result-store-entries: want a positive number, got %d", r.storeEntries)
	}
	if r.storeBytesPerPrin > r.storeBytes {
		return fmt.Errorf("--result-store-bytes-per-principal: want at most --result-store-bytes (%d), 0 for half of it, or \"unlimited\", got %d", r.storeBytes, r.storeBytesPerPrin)
	}
	if r.storeEntriesPerPrin > r.storeEntries {
		return fmt.Errorf("--result-store-entries-per-principal: want at most --result-store-entries (%d), 0 for half of it, or \"unlimited\", got %d", r.storeEntries, r.storeEntriesPerPrin)
	}
	return nil
}
