//go:build race

package estate_test

// raceEnabled: the race detector multiplies the time and memory of the
// tests that build the whole googleapis catalog (3 GB, 2 minutes without
// it); they skip under -race, and make unit-estate runs them without.
const raceEnabled = true
