package compiled

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"slices"
	"sync"
)

// packSchemas copies the schemas ForceSchemas built into one block and
// points the results at the copies. Discovery builds each schema among
// many times its size of short-lived values (descriptors walked, nodes,
// encodings tried and dropped), so the schemas end up scattered over
// memory pages that, once that garbage is collected, hold little else but
// cannot be returned: on the googleapis catalog the heap in use stood at
// twice the live heap. Packed, the pages the scattered schemas held are
// returned with the garbage. Tools sharing a schema (the same bytes, as
// the compile cache shares them) keep sharing its copy.
//
// With zip (search mode), input schemas are held deflated: an answer
// inflates the few it carries (tens of microseconds each), and the
// googleapis catalog's 52 MB of input schemas take 18 (deflated at the
// fastest level: the warm-up deflates every one).
// A typed list sends every schema of a page, so typed mode holds them
// plain.
func packSchemas(built []builtSchemas, zip bool) {
	// Sized up front: grown by appending, the buffer of the googleapis
	// catalog's 118 MB of schemas cost seconds of copying and zeroing.
	unique := make(map[packKey]bool)
	size := 0
	for _, b := range built {
		for _, k := range [...]packKey{keyOf(b.in, zip), keyOf(b.out, false)} {
			if k.n > 0 && !unique[k] {
				unique[k] = true
				if k.zip {
					size += k.n / 2 // JSON schemas deflate to a third or less
				} else {
					size += k.n
				}
			}
		}
	}
	p := packer{buf: make([]byte, 0, size), spans: make(map[packKey][2]int, len(unique))}
	type spans struct{ in, out [2]int }
	at := make([]spans, len(built))
	for i, b := range built {
		at[i] = spans{p.add(b.in, zip), p.add(b.out, false)}
	}
	block := p.buf
	if zip {
		// The estimate leaves room; copied out at its size.
		block = make([]byte, len(p.buf))
		copy(block, p.buf)
	}
	slice := func(s [2]int) []byte {
		if s[0] == s[1] {
			return nil
		}
		return block[s[0]:s[1]:s[1]]
	}
	for i := range built {
		b := &built[i]
		if zip && b.in != nil {
			b.inZ, b.inLen, b.in = slice(at[i].in), len(b.in), nil
		} else {
			b.in = slice(at[i].in)
		}
		b.out = slice(at[i].out)
	}
}

type packKey struct {
	data *byte
	n    int
	zip  bool
}

func keyOf(s []byte, zip bool) packKey {
	if len(s) == 0 {
		return packKey{}
	}
	return packKey{&s[0], len(s), zip}
}

// packer writes schemas, each once, into one buffer, plain or deflated.
type packer struct {
	buf   []byte
	spans map[packKey][2]int
	zw    *flate.Writer
}

// add writes s, unless written before, and returns where it is in buf.
func (p *packer) add(s []byte, zip bool) [2]int {
	if len(s) == 0 {
		return [2]int{}
	}
	k := keyOf(s, zip)
	if sp, ok := p.spans[k]; ok {
		return sp
	}
	start := len(p.buf)
	if !zip {
		p.buf = append(p.buf, s...)
	} else {
		w := appendWriter{&p.buf}
		if p.zw == nil {
			p.zw, _ = flate.NewWriter(w, flate.BestSpeed) // a valid level: no error
		} else {
			p.zw.Reset(w)
		}
		// Writes to a slice do not fail.
		_, _ = p.zw.Write(s)
		_ = p.zw.Close()
	}
	sp := [2]int{start, len(p.buf)}
	p.spans[k] = sp
	return sp
}

type appendWriter struct{ b *[]byte }

func (w appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// inflaters are the readers that inflate deflated schemas, reused: one
// costs about 40 KB to make.
var inflaters sync.Pool

// AppendInflated appends to dst the n bytes z inflates to.
func AppendInflated(dst, z []byte, n int) ([]byte, error) {
	src := bytes.NewReader(z)
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return dst, err
	}
	defer inflaters.Put(r)
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	if _, err := io.ReadFull(r, dst[start:]); err != nil {
		return dst[:start], fmt.Errorf("inflating a schema: %w", err)
	}
	return dst, nil
}
