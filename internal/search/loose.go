package search

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Loose matches: what a request gets when its words match no document the
// normal way (SearchWithin finds nothing), so that a search never answers
// empty while there are documents to answer with. The evidence is weaker:
//
//  1. every word of the request, its values' and quoted text's words too
//     (user:anne: user; docker.io/library/redis:7: docker, library, redis,
//     and image, since it is written as a container image is), and those
//     the vocabulary read as a kind or a question ("view", "which"), each
//     matched as itself, through the vocabulary, as the beginning of a
//     longer term, by a term it begins, or by a shared stem ("present",
//     "presence");
//  2. a yes-or-no question, matched against the words of the operations
//     that answer one: whether someone may ("can user:anne view
//     document:budget?": check, permission, allow; the verb inside is what
//     is asked about, not what to do), whether something is there or in
//     what state ("is the image present?": check, status, exist);
//  3. the kind of request (a read, a write, the standard method asked
//     for; a question reads) and its verb, which rank the documents the
//     words found, and, when no word matches any, all the documents (reads
//     first, when the request asks for no kind), best of each group first.

// Weights of the loose evidence.
const (
	// looseValueWeight scales a word of a value or of quoted text.
	looseValueWeight = 0.5
	// looseQuestionWeight scales the terms of a yes-or-no question; those
	// of a question whether someone may count fully: the check is what
	// it asks for.
	looseQuestionWeight = 0.5
	// stemWeight discounts a term sharing only a stem's beginning with
	// the word ("presence" for "present").
	stemWeight = 0.4
	// minShared is the shortest beginning a word and a term must share
	// to match by stem; maxStemTerms bounds the terms one word matches so.
	minShared    = 5
	maxStemTerms = 16
	// looseFloor is a document's loose score when no word matches it: it
	// is then ranked by its kind and action alone.
	looseFloor = 0.01
)

// readFactor is kindFactor's row for a read of no particular kind: a
// question that names none ("is the image there?"), which a custom read
// (Check, Status) answers as well as a get.
var readFactor = [7]float64{1.2, 1.2, 0.5, 0.6, 0.4, 1.2, 0.6}

// Questions, by their first words.
var (
	// modalStarts start a question of whether someone may do something.
	modalStarts = map[string]bool{"can": true, "could": true, "may": true, "might": true, "can't": true, "cannot": true}
	// yesNoStarts start another yes-or-no question.
	yesNoStarts = map[string]bool{"is": true, "are": true, "was": true, "were": true, "does": true, "do": true, "did": true,
		"has": true, "have": true, "will": true, "would": true, "should": true, "isn't": true, "aren't": true,
		"doesn't": true, "don't": true, "hasn't": true, "haven't": true}
	// requestStarts start a request put as a question when "you", "we"
	// or "I" follows ("can you restart it?", "should we drop it?").
	requestStarts = map[string]bool{"can": true, "could": true, "would": true, "will": true, "should": true, "may": true, "might": true}
	// whStarts start an open question.
	whStarts = map[string]bool{"what": true, "which": true, "who": true, "whose": true, "where": true, "when": true,
		"how": true, "what's": true, "where's": true, "who's": true, "how's": true}
)

// The terms of the operations that answer a yes-or-no question: whether
// someone may do something (modalTerms), whether something is there, or
// in what state (yesNoTerms).
var (
	modalTerms = []string{"check", "permission", "allow", "access", "authoriz"}
	yesNoTerms = []string{"check", "status", "exist"}
)

// questionKind is what a query asks, by its first words.
type questionKind uint8

const (
	notQuestion questionKind = iota
	openQuestion
	yesNoQuestion
	modalQuestion
)

// imageRE matches a container image reference: a path of at least two
// parts with a tag or a digest (library/redis:7, ghcr.io/org/app@sha256:…),
// or one under a registry's host name (docker.io/nginx). Compiled on the
// first query, not at every start.
var imageRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?/[a-z0-9._-]+(?:/[a-z0-9._-]+)*|[a-z0-9._-]+(?:/[a-z0-9._-]+)+(?::[\w.-]+|@sha256:[0-9a-f]+))(?::[\w.-]+|@sha256:[0-9a-f]+)?$`)
})

// SearchLoose is SearchWithin that answers empty only when keep accepts
// no document (or the index has none, or limit is under 1): when the
// query's words match no document the normal way, it answers with loose
// matches (LooseWithin) and reports it. A query that matches answers
// exactly what SearchWithin does, at the same cost.
func (ix *Index) SearchLoose(query string, limit int, keep func(doc int) bool) (hits []Hit, loose bool) {
	if hits = ix.SearchWithin(query, limit, keep); len(hits) > 0 || limit <= 0 || ix.n == 0 {
		return hits, false
	}
	hits = ix.LooseWithin(query, limit, keep)
	return hits, len(hits) > 0
}

// LooseWithin ranks the documents keep accepts (nil: all) by the loose
// evidence of query (see the top of loose.go), best first, and returns
// up to limit of them: those any word matches, or, when none does, the
// documents ranked by the kind and action the query asks for, the best
// of each group before the second of any, so that a short answer shows
// several groups. It is empty only when keep accepts no document.
func (ix *Index) LooseWithin(query string, limit int, keep func(doc int) bool) []Hit {
	if limit <= 0 || ix.n == 0 {
		return nil
	}
	p := vocabulary().read(query, ix)
	q := askedQuestion(query, &p)
	groups, weights, said := ix.looseGroups(query, &p, q)
	// The kind asked for ranks the documents: the standard methods the
	// request names, or a read for a question that names none (or whose
	// verb is what it asks whether someone may do).
	kinds := &readFactor
	var row [7]float64
	switch {
	case q == modalQuestion:
	case len(p.kinds) > 0:
		for k := range p.kinds {
			for c, f := range kindFactor[k] {
				row[c] = max(row[c], f)
			}
		}
		kinds = &row
	case q == notQuestion:
		kinds = nil
	}
	sc := ix.getScratch()
	scores, best, covered := sc.scores, sc.best, sc.covered
	touched, matched := sc.touched, sc.matched
	asked := 0.0 // the weight of the groups some document matches
	for gi, alts := range groups {
		touched = touched[:0]
		for _, a := range alts {
			ps := ix.postings[a.term]
			if len(ps) == 0 {
				continue
			}
			touched = accumulate(ps, a.weight*ix.idf(len(ps)), keep, best, touched)
		}
		if len(touched) > 0 {
			asked += weights[gi]
		}
		for _, d := range touched {
			if scores[d] == 0 {
				matched = append(matched, d)
			}
			scores[d] += weights[gi] * best[d]
			covered[d] += weights[gi]
			best[d] = 0
		}
	}
	// boosted marks, by id, the actions asked for: the query's verbs (but
	// a modal question's, which it asks whether someone may do) and the
	// words it says.
	boosted := make([]bool, len(ix.ids))
	sets := []map[string]bool{said}
	if q != modalQuestion {
		sets = append(sets, p.verbs)
	}
	for _, set := range sets {
		for a := range set {
			if id, ok := ix.ids[a]; ok {
				boosted[id] = true
			}
		}
	}
	factor := func(d int) float64 {
		f := 1.0
		if kinds != nil {
			f *= kinds[ix.columns[d]]
		}
		if a := ix.actionIDs[d]; a >= 0 && boosted[a] {
			f *= ActionBoost
		}
		if ix.superseded[d] && !p.version {
			f *= SupersededFactor
		}
		return f
	}
	var hits []Hit
	if len(matched) > 0 {
		hits = make([]Hit, len(matched))
		for i, d := range matched {
			// Coordination, as SearchWithin's: a document matching
			// more of the evidence ranks higher.
			hits[i] = Hit{Doc: int(d), Score: (scores[d] + looseFloor) * factor(int(d)) * math.Sqrt(covered[d]/asked)}
		}
		hits = topHits(hits, limit)
	}
	sc.touched, sc.matched = touched, matched
	ix.putScratch(sc)
	if len(hits) > 0 {
		return hits
	}
	// No word matches: every document keep accepts, by kind and action;
	// a request that asks for no kind gets reads first, which show what
	// there is and change nothing.
	if kinds == nil {
		kinds = &readFactor
	}
	return ix.spread(limit, keep, factor)
}

// spread ranks every document keep accepts by score and returns up to
// limit of them, the best of each group before the second of any, so
// that a short answer shows several groups; a hit's score is lowered to
// its predecessor's where that order puts it after a better one, so that
// the answer is best first by score as every ranking's. Each group keeps
// only its limit best, in place: no sort of the whole catalog.
func (ix *Index) spread(limit int, keep func(doc int) bool, score func(doc int) float64) []Hit {
	best := make([][]Hit, ix.nGroups) // each group's limit best, best first
	for d := range ix.n {
		if keep != nil && !keep(d) {
			continue
		}
		h := Hit{Doc: d, Score: looseFloor * score(d)}
		g := ix.groups[d]
		l := best[g]
		if len(l) == limit && byRank(h, l[limit-1]) >= 0 {
			continue
		}
		if l == nil {
			l = make([]Hit, 0, min(limit, 16))
		}
		if len(l) < limit {
			l = append(l, h)
		}
		i := len(l) - 1
		for ; i > 0 && byRank(h, l[i-1]) < 0; i-- {
			l[i] = l[i-1]
		}
		l[i] = h
		best[g] = l
	}
	var out, round []Hit
	for r := 0; len(out) < limit; r++ {
		round = round[:0]
		for _, l := range best {
			if r < len(l) {
				round = append(round, l[r])
			}
		}
		if len(round) == 0 {
			break
		}
		for _, h := range topHits(round, limit-len(out)) {
			if len(out) > 0 {
				h.Score = min(h.Score, out[len(out)-1].Score)
			}
			out = append(out, h)
		}
	}
	return out
}

// looseGroups are the loose evidence's groups of alternatives (steps 1
// and 2 at the top of loose.go) and their weights, and the stems of what
// the query asks to do: a document whose action is one of them ranks
// higher.
func (ix *Index) looseGroups(query string, p *plan, q questionKind) (groups [][]alternative, weights []float64, said map[string]bool) {
	said = map[string]bool{}
	at := map[string]int{} // a stem's group
	add := func(t, s string, w float64) {
		if g, ok := at[s]; ok {
			weights[g] = max(weights[g], w)
			return
		}
		at[s] = len(groups)
		groups = append(groups, ix.looseAlternatives(t, s))
		weights = append(weights, w)
	}
	for _, f := range splitQuery(query) {
		if f.sep != 0 {
			continue
		}
		w := 1.0
		if f.quoted || isValue(f.text) {
			w = looseValueWeight
			if imageRE().MatchString(strings.ToLower(f.text)) {
				add("image", Stem("image"), w)
			}
		}
		for _, piece := range strings.FieldsFunc(f.text, func(r rune) bool { return !unicode.IsLetter(r) }) {
			for _, t := range Tokens(piece) {
				s := Stem(t)
				if len(t) < minPrefix || stopwords[t] || stopwords[s] {
					continue
				}
				ws := w
				switch {
				case q != modalQuestion:
					said[s] = true
				case p.verbs[s]:
					// What the question asks whether someone may do.
					ws = min(w, asideWeight)
				}
				add(t, s, ws)
			}
		}
	}
	var terms []string
	switch {
	case q == modalQuestion:
		terms = modalTerms
		for _, t := range terms {
			said[t] = true
		}
	case q == yesNoQuestion:
		terms = yesNoTerms
	}
	if len(terms) > 0 {
		alts := make([]alternative, len(terms))
		for i, t := range terms {
			alts[i] = alternative{term: t, weight: 1}
		}
		groups = append(groups, alts)
		w := looseQuestionWeight
		if q == modalQuestion {
			w = 1
		}
		weights = append(weights, w)
	}
	return groups, weights, said
}

// looseAlternatives are the terms word t (stem s) may loosely match: s,
// what the vocabulary says it means, the terms it begins or that begin
// it, and those sharing its stem's beginning.
func (ix *Index) looseAlternatives(t, s string) []alternative {
	v := vocabulary()
	alts := []alternative{{term: s, weight: 1}}
	for _, k := range v.kindOf[s] {
		for _, w := range v.kindWords[k] {
			alts = append(alts, alternative{term: w, weight: SynonymWeight})
		}
	}
	for _, verb := range v.verbOf[s] {
		alts = append(alts, alternative{term: verb, weight: SynonymWeight})
	}
	for _, n := range v.nounOf[s] {
		alts = append(alts, alternative{term: n, weight: SynonymWeight})
	}
	alts = append(alts, ix.prefixes(t)...)
	if shared := max(minShared, len(s)-2); len(s) > minShared {
		stem := s[:shared]
		i, _ := slices.BinarySearch(ix.vocab, stem)
		for n := 0; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], stem) && n < maxStemTerms; i, n = i+1, n+1 {
			alts = append(alts, alternative{term: ix.vocab[i], weight: stemWeight})
		}
	}
	return dedupe(alts)
}

// askedQuestion is the question query asks, by its first words: "can
// user:anne view ...?" whether someone may, "is the image ...?" another
// yes or no, "which ..." an open one; a request put as a question ("can
// you restart it?") or one asking for a change is none.
func askedQuestion(query string, p *plan) questionKind {
	fs := strings.Fields(strings.ToLower(typographic.Replace(query)))
	var first, second string
	if len(fs) > 0 {
		first = strings.Trim(fs[0], ",.;:!?\"`()")
	}
	if len(fs) > 1 {
		second = strings.Trim(fs[1], ",.;:!?\"`()")
	}
	switch {
	case requestStarts[first] && (second == "you" || second == "u" || second == "we" || second == "i"):
		// "can you ...", "should we ...", "could I ...": a request.
		return notQuestion
	case modalStarts[first]:
		return modalQuestion
	case p.writes(vocabulary()) || p.kinds[KindCreate] || p.kinds[KindUpdate] || p.kinds[KindDelete]:
		return notQuestion
	case yesNoStarts[first]:
		return yesNoQuestion
	case whStarts[first] || strings.HasSuffix(strings.TrimSpace(query), "?"):
		return openQuestion
	}
	return notQuestion
}
