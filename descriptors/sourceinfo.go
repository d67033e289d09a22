package descriptors

import "google.golang.org/protobuf/types/descriptorpb"

// slimSourceInfo keeps of info the locations anything downstream reads:
// those of declarations (a path of (field, index) pairs, so of even
// length: a message, a field, a service, a method, an enum value) and
// those carrying a comment. It drops the rest in place: a declaration's
// name, number, type and label, which protoc records as locations of
// their own, about four in five of a file's locations. The gateway reads
// comments, by declaration (SourceLocations().ByDescriptor), and a
// printed resource orders declarations by their spans; nothing reads the
// parts' spans. At the googleapis catalog's size the dropped locations,
// and the index protobuf-go builds over every location at its first
// lookup, were a fifth of the live heap (docs/scale.md).
func slimSourceInfo(info *descriptorpb.SourceCodeInfo) {
	if info == nil {
		return
	}
	kept := info.Location[:0]
	for _, loc := range info.GetLocation() {
		if len(loc.GetPath())%2 == 0 || loc.GetLeadingComments() != "" || loc.GetTrailingComments() != "" || len(loc.GetLeadingDetachedComments()) > 0 {
			kept = append(kept, loc)
		}
	}
	clear(info.Location[len(kept):])
	info.Location = kept
}
