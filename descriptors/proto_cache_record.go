package descriptors

import (
	"crypto/sha256"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// The cache entry's record (cacheEntry) is written by hand, field after
// field in the order of the struct: a string or a list as its length (a
// uvarint) then its content, an int64 zigzag-encoded, a hash as its 32
// bytes, a bool as one byte. It was gob-encoded: encoding/gob's
// initialisers run at every start of every gateway (27 KB and 364
// allocations, its type registry kept for the life of the process) for a
// record only a --proto gateway with a cache directory reads or writes.
// What the record holds is MAC-checked before it is decoded (readCache);
// the decoder still refuses anything out of range rather than trust it.

// appendRecord appends e's record to b.
func appendRecord(b []byte, e *cacheEntry) []byte {
	b = append(b, e.Key[:]...)
	b = protowire.AppendVarint(b, uint64(len(e.Files)))
	for _, f := range e.Files {
		b = protowire.AppendString(b, f.Path)
		b = protowire.AppendVarint(b, protowire.EncodeZigZag(f.Size))
		b = protowire.AppendVarint(b, protowire.EncodeZigZag(f.Mtime))
		b = append(b, f.Hash[:]...)
		b = appendBool(b, f.Racy)
	}
	b = appendStrings(b, e.Missing)
	b = protowire.AppendVarint(b, uint64(len(e.Resolved)))
	for _, r := range e.Resolved {
		b = protowire.AppendString(b, r.Name)
		b = protowire.AppendString(b, r.Path)
		b = appendStrings(b, r.Missed)
		b = appendBool(b, r.Unreadable)
	}
	return b
}

func appendStrings(b []byte, ss []string) []byte {
	b = protowire.AppendVarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = protowire.AppendString(b, s)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// errRecord is what decodeRecord reports for any record it cannot read.
var errRecord = errors.New("the record is truncated or malformed")

// decodeRecord reads the record appendRecord wrote, all of b.
func decodeRecord(b []byte) (cacheEntry, error) {
	r := recordReader{b: b}
	var e cacheEntry
	r.hash(&e.Key)
	if n := r.count(); n > 0 {
		e.Files = make([]cacheFile, n)
		for i := range e.Files {
			f := &e.Files[i]
			f.Path = r.string()
			f.Size = r.int64()
			f.Mtime = r.int64()
			r.hash(&f.Hash)
			f.Racy = r.bool()
		}
	}
	e.Missing = r.strings()
	if n := r.count(); n > 0 {
		e.Resolved = make([]cacheResolution, n)
		for i := range e.Resolved {
			x := &e.Resolved[i]
			x.Name = r.string()
			x.Path = r.string()
			x.Missed = r.strings()
			x.Unreadable = r.bool()
		}
	}
	if r.bad || len(r.b) != 0 {
		return cacheEntry{}, errRecord
	}
	return e, nil
}

// recordReader reads a record's fields in turn; once one is out of range,
// bad is set and every later read returns a zero value.
type recordReader struct {
	b   []byte
	bad bool
}

func (r *recordReader) varint() uint64 {
	if r.bad {
		return 0
	}
	v, n := protowire.ConsumeVarint(r.b)
	if n < 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a list's length; each element takes at least one byte, so
// a length beyond the bytes left is refused before anything is allocated.
func (r *recordReader) count() int {
	n := r.varint()
	if n > uint64(len(r.b)) {
		r.bad = true
		return 0
	}
	return int(n)
}

func (r *recordReader) string() string {
	n := r.count()
	if r.bad {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *recordReader) strings() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.string()
	}
	return ss
}

func (r *recordReader) int64() int64 { return protowire.DecodeZigZag(r.varint()) }

func (r *recordReader) hash(h *[sha256.Size]byte) {
	if r.bad || len(r.b) < len(h) {
		r.bad = true
		return
	}
	r.b = r.b[copy(h[:], r.b):]
}

func (r *recordReader) bool() bool {
	if r.bad || len(r.b) == 0 || r.b[0] > 1 {
		r.bad = true
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}
