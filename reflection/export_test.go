package reflection

// SetCompileHook has f called as each of s's compiles starts (before
// reading any file), so tests count compiles and hold one back.
func SetCompileHook(s *ProtoSource, f func()) { s.compiling = f }

// RehashEvery is how many checks of a file source's inputs pass between
// two that read and hash every file whatever its size and time say.
const RehashEvery = rehashEvery
