//go:build race

package schema

// raceEnabled: the race detector multiplies the time of compiling the
// googleapis sources and building their schemas, which
// TestWithTruncatedAsDecoded then leaves out.
const raceEnabled = true
