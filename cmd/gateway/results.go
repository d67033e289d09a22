package main

import (
	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// checkResults relates the result budget and the store of whole results
// (gateway/budget.go) to one another, as their flags set them.
func checkResults(r *gateway.ResultOptions) error {
	if r.MaxBytes != gateway.Off && r.MaxBytes < gateway.MinMaxResultBytes {
		return settingErrorf("%s: want at least %d bytes, or \"unlimited\" for no budget, got %d", flagName("max-result-bytes"), gateway.MinMaxResultBytes, r.MaxBytes)
	}
	if r.StoreBytesPerPrincipal > r.StoreBytes {
		return settingErrorf("%s: want at most %s (%d), 0 for half of it, or \"unlimited\", got %d", flagName("result-store-bytes-per-principal"), flagName("result-store-bytes"), r.StoreBytes, r.StoreBytesPerPrincipal)
	}
	if r.StoreEntriesPerPrincipal > r.StoreEntries {
		return settingErrorf("%s: want at most %s (%d), 0 for half of it, or \"unlimited\", got %d", flagName("result-store-entries-per-principal"), flagName("result-store-entries"), r.StoreEntries, r.StoreEntriesPerPrincipal)
	}
	return nil
}
