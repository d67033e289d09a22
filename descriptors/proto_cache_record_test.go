package descriptors

import (
	"reflect"
	"testing"
)

// TestCacheRecordRoundTrip: every field of an entry's record comes back
// as written, and a record cut short anywhere, or followed by anything, is
// refused.
func TestCacheRecordRoundTrip(t *testing.T) {
	e := cacheEntry{
		Key: [32]byte{1, 2, 3, 31: 0xff},
		Files: []cacheFile{
			{Path: "api/v1/api.proto", Size: 1234, Mtime: 1_700_000_000_123_456_789, Hash: [32]byte{9, 31: 7}, Racy: true},
			{Path: "ü/€.proto", Size: 0, Mtime: -1},
		},
		Missing: []string{"google/api/annotations.proto", ""},
		Resolved: []cacheResolution{
			{Name: "a.proto", Path: "/abs/a.proto", Missed: []string{"/x/a.proto"}},
			{Name: "b.proto", Unreadable: true},
		},
	}
	b := appendRecord(nil, &e)
	got, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, e)
	}
	for n := range len(b) {
		if _, err := decodeRecord(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes was accepted", n, len(b))
		}
	}
	if _, err := decodeRecord(append(b, 0)); err == nil {
		t.Fatal("a record followed by a byte was accepted")
	}

	empty, err := decodeRecord(appendRecord(nil, &cacheEntry{}))
	if err != nil || !reflect.DeepEqual(empty, cacheEntry{}) {
		t.Fatalf("the empty record: %+v, %v", empty, err)
	}
}
