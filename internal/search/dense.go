package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Vectors are one embedding per document, for the semantic half of a
// hybrid ranking: a model's embeddings understand paraphrases no
// vocabulary lists, and the lexical ranking keeps exact names and rare
// words first. Fuse merges the two.
type Vectors struct {
	dim  int
	data []float32 // document i is data[i*dim : (i+1)*dim], unit length
}

// NewVectors holds vs, one vector per document in the index's order. All
// must have the same dimension; each is normalised to unit length, so
// similarity is a dot product. A zero vector matches nothing.
func NewVectors(vs [][]float32) (*Vectors, error) {
	if len(vs) == 0 {
		return &Vectors{}, nil
	}
	dim := len(vs[0])
	if dim == 0 {
		return nil, errors.New("search: an empty embedding")
	}
	v := &Vectors{dim: dim, data: make([]float32, 0, dim*len(vs))}
	for i, x := range vs {
		if len(x) != dim {
			return nil, fmt.Errorf("search: embedding %d has %d dimensions, the first has %d", i, len(x), dim)
		}
		v.data = append(v.data, normalized(x)...)
	}
	return v, nil
}

// Dim is the vectors' dimension.
func (v *Vectors) Dim() int { return v.dim }

// Len is how many documents have a vector.
func (v *Vectors) Len() int {
	if v.dim == 0 {
		return 0
	}
	return len(v.data) / v.dim
}

func normalized(x []float32) []float32 {
	var sum float64
	for _, f := range x {
		sum += float64(f) * float64(f)
	}
	out := make([]float32, len(x))
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return out
	}
	n := float32(1 / math.Sqrt(sum))
	for i, f := range x {
		out[i] = f * n
	}
	return out
}

// Nearest returns up to limit documents by cosine similarity to q, best
// first, among those keep accepts (nil accepts all). A q of another
// dimension finds nothing.
func (v *Vectors) Nearest(q []float32, limit int, keep func(doc int) bool) []Hit {
	if v == nil || len(q) != v.dim || limit <= 0 {
		return nil
	}
	q = normalized(q)
	hits := make([]Hit, 0, v.Len())
	for d := range v.Len() {
		if keep != nil && !keep(d) {
			continue
		}
		row := v.data[d*v.dim : (d+1)*v.dim]
		var dot float32
		for i, f := range row {
			dot += f * q[i]
		}
		if dot > 0 {
			hits = append(hits, Hit{Doc: d, Score: float64(dot)})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	return hits[:min(limit, len(hits))]
}

// rrfK is reciprocal rank fusion's constant: a document ranked r-th in a
// list scores 1/(rrfK+r) from it. 60 is the value of the RRF paper
// (Cormack et al., 2009), and makes the fusion insensitive to how each
// list's scores are scaled.
const rrfK = 60

// Fuse merges rankings of the same documents by reciprocal rank fusion
// and returns up to limit, best first; ties keep the first ranking's
// order. A document found by one ranking only scores from that one.
func Fuse(limit int, rankings ...[]Hit) []Hit {
	if limit <= 0 {
		return nil
	}
	score := map[int]float64{}
	order := map[int]int{}
	for _, r := range rankings {
		for rank, h := range r {
			score[h.Doc] += 1 / float64(rrfK+rank+1)
			if _, ok := order[h.Doc]; !ok {
				order[h.Doc] = len(order)
			}
		}
	}
	out := make([]Hit, 0, len(score))
	for d, s := range score {
		out = append(out, Hit{Doc: d, Score: s})
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(order[a.Doc], order[b.Doc])
	})
	return out[:min(limit, len(out))]
}

// Exact returns the document whose Key the query is (ignoring case and
// surrounding space), or -1.
func (ix *Index) Exact(query string) int {
	if i, ok := ix.keys[normKey(query)]; ok {
		return i
	}
	return -1
}
