package main

import (
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
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

func (r *resultFlags) check() error {
	if r.maxBytes != gateway.Off && r.maxBytes < gateway.MinMaxResultBytes {
		return settingErrorf("%s: want at least %d bytes, or \"unlimited\" for no budget, got %d", flagName("max-result-bytes"), gateway.MinMaxResultBytes, r.maxBytes)
	}
	if r.storeBytesPerPrin > r.storeBytes {
		return settingErrorf("%s: want at most %s (%d), 0 for half of it, or \"unlimited\", got %d", flagName("result-store-bytes-per-principal"), flagName("result-store-bytes"), r.storeBytes, r.storeBytesPerPrin)
	}
	if r.storeEntriesPerPrin > r.storeEntries {
		return settingErrorf("%s: want at most %s (%d), 0 for half of it, or \"unlimited\", got %d", flagName("result-store-entries-per-principal"), flagName("result-store-entries"), r.storeEntries, r.storeEntriesPerPrin)
	}
	return nil
}
