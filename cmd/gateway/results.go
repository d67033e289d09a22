package main

import (
	"fmt"
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
		return fmt.Errorf("--max-result-bytes: want at least %d bytes, or \"unlimited\" for no budget, got %d", gateway.MinMaxResultBytes, r.maxBytes)
	}
	if r.storeBytesPerPrin > r.storeBytes {
		return fmt.Errorf("--result-store-bytes-per-principal: want at most --result-store-bytes (%d), 0 for half of it, or \"unlimited\", got %d", r.storeBytes, r.storeBytesPerPrin)
	}
	if r.storeEntriesPerPrin > r.storeEntries {
		return fmt.Errorf("--result-store-entries-per-principal: want at most --result-store-entries (%d), 0 for half of it, or \"unlimited\", got %d", r.storeEntries, r.storeEntriesPerPrin)
	}
	return nil
}
