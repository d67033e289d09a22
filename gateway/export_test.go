package gateway

import "time"

// SetSemanticPause sets how long queries skip the embeddings endpoint
// after it failed, for the gateways a test starts next; it returns the
// function that restores the default. Tests that call it do not run in
// parallel.
func SetSemanticPause(d time.Duration) (restore func()) {
	old := semanticPause
	semanticPause = d
	return func() { semanticPause = old }
}
