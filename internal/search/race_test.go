//go:build race

package search_test

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back at random, so allocation counts of pooled code vary from run
// to run and are not compared.
const raceEnabled = true
