package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Field is one weighted part of a document. Documents of one index should
// put the same kind of text at the same position (say 0: the name, 1: the
// description), because length normalisation compares each field with
// the same field of the other documents.
type Field struct {
	Text string
	// Weight scales the field's term frequencies: a word in a name says
	// more about a document than the same word in a long description.
	// Zero or negative drops the field.
	Weight float64
}

// Document is one searchable thing.
type Document struct {
	// Key is the document's exact name: a query equal to it (ignoring
	// surrounding space and case) ranks the document first.
	Key string
	// Action is the word for what the document does, if it has one (an
	// operation's leading verb: "Resize" of ResizeDisk). A query that
	// uses it, or a synonym, ranks the document ActionBoost times higher:
	// the verb a person asks with is the surest sign of the operation
	// they want, and common verbs (list, get) have too low an idf for
	// BM25 alone to weigh them.
	Action string
	Fields []Field
}

// ActionBoost multiplies the score of a document whose Action the query
// uses.
const ActionBoost = 1.5

// Hit is one ranked document: its position in the slice given to New.
type Hit struct {
	Doc   int
	Score float64
}

// BM25 parameters: k1 saturates repeated terms, b is how much a long
// field is discounted. The usual values; names are short and rarely
// repeat a term, so the ranking is not sensitive to them.
const (
	k1 = 1.2
	b  = 0.75
)

// Index is built once from a fixed set of documents and is safe for
// concurrent queries.
type Index struct {
	n        int
	postings map[string][]posting
	// vocab is every term, sorted, for prefix matches of query words the
	// index does not hold.
	vocab []string
	keys  map[string]int
	// actions are the documents' stemmed Actions.
	actions []string
}

type posting struct {
	doc int32
	// tf is the document's BM25F pseudo-frequency of the term: the sum
	// over fields of weight * frequency / length normalisation.
	tf float32
}

// New indexes docs. The index keeps no reference to them.
func New(docs []Document) *Index {
	ix := &Index{n: len(docs), postings: make(map[string][]posting), keys: make(map[string]int, len(docs)), actions: make([]string, len(docs))}
	nf := 0
	for _, d := range docs {
		nf = max(nf, len(d.Fields))
	}
	terms := make([][][]string, len(docs))
	avg := make([]float64, nf)
	for i, d := range docs {
		terms[i] = make([][]string, len(d.Fields))
		for f, fld := range d.Fields {
			if fld.Weight > 0 {
				terms[i][f] = Terms(fld.Text)
				avg[f] += float64(len(terms[i][f]))
			}
		}
		if a := Terms(d.Action); len(a) > 0 {
			ix.actions[i] = a[0]
		}
		if k := normKey(d.Key); k != "" {
			if _, dup := ix.keys[k]; !dup {
				ix.keys[k] = i
			}
		}
	}
	for f := range avg {
		if len(docs) > 0 {
			avg[f] /= float64(len(docs))
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	tf := make(map[string]float64)
	for i, d := range docs {
		clear(tf)
		for f, ts := range terms[i] {
			if len(ts) == 0 {
				continue
			}
			norm := 1 - b + b*float64(len(ts))/avg[f]
			w := d.Fields[f].Weight / norm
			for _, t := range ts {
				tf[t] += w
			}
		}
		for t, v := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: float32(v)})
		}
	}
	ix.vocab = make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		ix.vocab = append(ix.vocab, t)
	}
	slices.Sort(ix.vocab)
	return ix
}

// Len is the number of documents indexed.
func (ix *Index) Len() int { return ix.n }

func normKey(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// idf is BM25's inverse document frequency, never negative.
func (ix *Index) idf(df int) float64 {
	return math.Log(1 + (float64(ix.n)-float64(df)+0.5)/(float64(df)+0.5))
}

// alternative is one way a query word can match: a term and how much a
// match counts.
type alternative struct {
	term   string
	weight float64
}

// prefixWeight discounts a query word matched only as the beginning of a
// longer indexed term ("subscr" for "subscription", "db" for "database").
const prefixWeight = 0.6

// minPrefix is the shortest query word tried as a prefix, and the
// shortest indexed term an unknown word is truncated to.
const minPrefix = 3

// maxTruncate is how many trailing letters of an unknown word may be cut
// to find an indexed term.
const maxTruncate = 3

// groups turns a query into its words, each with the terms it may match:
// itself, its verb synonyms, and (when the index does not hold it) the
// indexed terms it begins. Two adjacent words that the index holds as one
// term ("back up", "end point") are taken as that term.
func (ix *Index) groups(query string) [][]alternative {
	var words []string
	for _, tok := range Tokens(query) {
		if !stopwords[tok] {
			words = append(words, tok)
		}
	}
	var out [][]alternative
	seen := make(map[string]bool)
	for i := 0; i < len(words); i++ {
		tok := words[i]
		if i+1 < len(words) {
			if joined := Stem(tok + words[i+1]); ix.postings[joined] != nil {
				tok = tok + words[i+1]
				i++
			}
		}
		t := Stem(tok)
		if seen[t] {
			continue
		}
		seen[t] = true
		alts := []alternative{{t, 1}}
		for _, s := range synonyms[t] {
			alts = append(alts, alternative{s, SynonymWeight})
		}
		if _, ok := ix.postings[t]; !ok && len(tok) >= minPrefix {
			i, _ := slices.BinarySearch(ix.vocab, tok)
			for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], tok); i++ {
				alts = append(alts, alternative{ix.vocab[i], prefixWeight})
			}
			// And the other way: an unknown word whose beginning is an
			// indexed term ("zonal" for "zone", "regional" for "region").
			for cut := 1; cut <= maxTruncate && len(tok)-cut >= minPrefix; cut++ {
				if _, ok := ix.postings[tok[:len(tok)-cut]]; ok {
					alts = append(alts, alternative{tok[:len(tok)-cut], prefixWeight})
					break
				}
			}
		}
		out = append(out, alts)
	}
	return out
}

// Search returns up to limit documents ranked by relevance to query, best
// first; ties keep the documents' order. A query equal to a document's
// Key puts that document first whatever its score. Documents that match
// no query word are not returned.
func (ix *Index) Search(query string, limit int) []Hit {
	if limit <= 0 || ix.n == 0 {
		return nil
	}
	// Dense per-document arrays: a query touches a good share of the
	// documents of a large catalog, and maps would cost more.
	scores := make([]float64, ix.n)
	best := make([]float64, ix.n)
	var touched, matched []int32
	groups := ix.groups(query)
	verbs := make(map[string]bool)
	for _, alts := range groups {
		// A word's contribution is its best alternative's, so a verb and
		// its synonyms in one tool name do not add up. An alternative is
		// worth no more than the word itself: matching a rare synonym
		// ("lookup") of a common word ("get") says no more than the word.
		own := math.Inf(1)
		if ps := ix.postings[alts[0].term]; len(ps) > 0 {
			own = ix.idf(len(ps))
		}
		touched = touched[:0]
		for _, a := range alts {
			if a.weight >= SynonymWeight {
				verbs[a.term] = true
			}
			ps := ix.postings[a.term]
			if len(ps) == 0 {
				continue
			}
			idf := min(ix.idf(len(ps)), own)
			for _, p := range ps {
				tf := float64(p.tf)
				s := a.weight * idf * tf * (k1 + 1) / (tf + k1)
				if best[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				best[p.doc] = max(best[p.doc], s)
			}
		}
		for _, d := range touched {
			if scores[d] == 0 {
				matched = append(matched, d)
			}
			scores[d] += best[d]
			best[d] = 0
		}
	}
	exact := -1
	if i, ok := ix.keys[normKey(query)]; ok {
		exact = i
	}
	hits := make([]Hit, 0, len(matched)+1)
	top := 0.0
	for _, d := range matched {
		s := scores[d]
		if a := ix.actions[d]; a != "" && verbs[a] {
			s *= ActionBoost
		}
		top = max(top, s)
		if int(d) != exact {
			hits = append(hits, Hit{Doc: int(d), Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	if exact >= 0 {
		hits = slices.Insert(hits, 0, Hit{Doc: exact, Score: top + 1})
	}
	return hits[:min(limit, len(hits))]
}
