package reflection

// SetOnWait makes r call f whenever a Resolve starts waiting for another's
// lookup of the same type, so a test can tell that concurrent callers
// share one lookup rather than hope they overlapped.
func SetOnWait(r *TypeResolver, f func()) { r.onWait = f }
