package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/grpc-mcp-gateway/gateway/internal/wordsplit"
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
	// Pairs also indexes each two adjacent words of the field as one
	// term ("machine type" of SetMachineType), so that a query naming
	// both ranks the document above those naming either. For names.
	Pairs bool
}

// Document is one searchable thing.
type Document struct {
	// Key is the document's exact name: a query equal to it (ignoring
	// surrounding space and case) ranks the document first.
	Key string
	// Action is the word for what the document does, if it has one (an
	// operation's leading verb: "Resize" of ResizeDisk). A query that
	// asks for it, in its own words or the vocabulary's, ranks the
	// document ActionBoost times higher: the verb a person asks with is
	// the surest sign of the operation they want, and common verbs (list,
	// get) have too low an idf for BM25 alone to weigh them.
	Action string
	// Kind is the standard method the document is (KindList, KindGet,
	// KindCreate, KindUpdate, KindDelete), "" for another. A query that
	// asks for a kind (a question form asks for a list, "get rid of" for
	// a delete) ranks documents of that kind above the others.
	Kind string
	// ReadOnly: the document changes nothing. A query asking to read
	// ranks it above one that writes, and the other way round.
	ReadOnly bool
	// Target is what the document's action is on ("machine type" of
	// SetMachineType, "instance" of Stop on Instances). A query that
	// names it ranks the document above those that only mention it.
	Target string
	// Whole is what the Target is part of, when it is not the thing
	// itself ("instance group" of ListInstances on InstanceGroups). A
	// query about the Target that does not name the whole ranks the
	// document lower: it asked for the thing, not for a part of another.
	Whole string
	// Several: the document acts on several things at once (a batch or
	// bulk operation). A request for a change to all or every one of a
	// kind ranks it higher.
	Several bool
	// Superseded: another document is the same operation in a newer or
	// more stable version of its API (the gateway: the same method of the
	// same service in a GA version where this one is beta, or a later
	// major). A query that names no version ranks it SupersededFactor
	// lower: it repeats a better match, and in a catalog holding every
	// version of many APIs such copies would crowd the distinct matches
	// out of a short answer.
	Superseded bool
	// Group is what the document belongs to (an API). A query's words
	// that no document of a group knows count against the group's
	// documents, so one shared word does not pull in an unrelated API.
	Group  string
	Fields []Field
}

// Factors of the ranking beyond BM25F. Each multiplies a document's
// score when its condition holds.
const (
	// ActionBoost: the document's Action is a verb the query uses;
	// SynonymActionBoost: one it asks for in other words, or a word of
	// the query that is not a verb there ("commit a new revision").
	ActionBoost        = 1.5
	SynonymActionBoost = 1.3
	// TargetBoost: the thing the query is about (the first noun after
	// its verb) is the document's Target; OtherTargetBoost: the query
	// names the Target elsewhere; FullTargetBoost: it names every word
	// of a Target of several ("network endpoint", not just "endpoint").
	TargetBoost      = 1.4
	OtherTargetBoost = 1.15
	FullTargetBoost  = 1.15
	// SeveralBoost: the query asks to change all or every one of a kind
	// and the document acts on several at once.
	SeveralBoost = 1.5
	// OneOfSeveral: the query asks to change all or every one of a kind
	// and the document changes one.
	OneOfSeveral = 0.75
	// TargetMiss: the query is about a thing and the document acts on
	// something the query does not name (VmExtensionPolicies_List for
	// "list vms").
	TargetMiss = 0.8
	// WholeMiss: the document acts on a part of a Whole the query does
	// not name.
	WholeMiss = 0.8
	// SupersededFactor: the document is Superseded and the query names
	// no version or release stage (v1beta1, alpha, preview). Low enough
	// that the copy falls below distinct matches of similar score, not
	// out of the answer: it is the same operation, so it can only be a
	// right answer where the better version is too.
	SupersededFactor = 0.5
)

// kindFactor is how well a document's kind fits the kind a query asks
// for: the right kind ranks higher, a read where a write was asked for
// (or the other way round) lower. Rows are the query's kind; columns the
// document's: list, get, create, update, delete, another read, another
// write.
var kindFactor = map[string][7]float64{
	KindList:   {1.4, 0.8, 0.5, 0.5, 0.4, 1.0, 0.6},
	KindGet:    {1.0, 1.4, 0.5, 0.6, 0.4, 1.0, 0.6},
	KindCreate: {0.5, 0.5, 1.4, 0.8, 0.4, 0.6, 1.0},
	KindUpdate: {0.5, 0.6, 0.8, 1.4, 0.5, 0.6, 1.0},
	KindDelete: {0.4, 0.5, 0.4, 0.6, 1.4, 0.5, 1.0},
}

func kindColumn(kind string, readOnly bool) int {
	switch kind {
	case KindList:
		return 0
	case KindGet:
		return 1
	case KindCreate:
		return 2
	case KindUpdate:
		return 3
	case KindDelete:
		return 4
	}
	if readOnly {
		return 5
	}
	return 6
}

// coherenceFloor is what a document of a group keeps of its score when
// its group knows none of the query's words that other groups know; a
// group that knows them all keeps everything.
const coherenceFloor = 0.5

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
	// initialisms are the initials of the multi-word names in documents'
	// keys (cas: content, addressable, storage of
	// ContentAddressableStorage_FindMissingBlobs), with those names'
	// terms: a request that abbreviates a name the index spells out.
	initialisms map[string][]string
	// vocab is every term, sorted, for prefix matches of query words the
	// index does not hold.
	vocab []string
	keys  map[string]int
	// Per document: the stem of its Action, its kind's column in
	// kindFactor, and its group's number (its Target and Whole are by id,
	// below).
	actions    []string
	columns    []uint8
	several    []bool
	superseded []bool
	groups     []int32
	nGroups    int
	// ids number the distinct strings of the documents' actions, targets
	// and wholes; actionIDs, targetIDs and wholeIDs are those of each
	// document (-1 for none). Scoring asks, for every matched document,
	// whether these are among the query's terms: by id, a query's
	// handful of terms is looked up once (marks), not each document's
	// strings hashed again (62% of a search on 13,386 tools).
	ids                 map[string]int32
	actionIDs           []int32
	targetIDs, wholeIDs []targetIDs
	// verbs are the documents' Actions: a request that starts with one
	// starts with a verb, even one the vocabulary does not know.
	verbs map[string]bool

	// scratch holds the per-document arrays of queries done, cleared of
	// what each touched: a query of a large catalog touches a few
	// thousand of its documents, and allocating and zeroing arrays over
	// all of them was a fifth of a search on 13,386 tools.
	scratch sync.Pool
}

// searchScratch is one query's per-document and per-group state; see
// SearchWithin. Between queries every element is zero, but seen's, which
// are -1.
type searchScratch struct {
	scores, best, covered []float64
	cover                 []float64
	seen                  []int
	touched, matched      []int32
	groupsSeen            []int32
}

func (ix *Index) getScratch() *searchScratch {
	if s, ok := ix.scratch.Get().(*searchScratch); ok {
		return s
	}
	s := &searchScratch{
		scores: make([]float64, ix.n), best: make([]float64, ix.n), covered: make([]float64, ix.n),
		cover: make([]float64, ix.nGroups), seen: make([]int, ix.nGroups),
	}
	for g := range s.seen {
		s.seen[g] = -1
	}
	return s
}

// putScratch clears what a query set in s and keeps it for the next.
func (ix *Index) putScratch(s *searchScratch) {
	for _, d := range s.matched {
		s.scores[d], s.covered[d] = 0, 0
	}
	for _, g := range s.groupsSeen {
		s.cover[g], s.seen[g] = 0, -1
	}
	s.touched, s.matched, s.groupsSeen = s.touched[:0], s.matched[:0], s.groupsSeen[:0]
	ix.scratch.Put(s)
}

// target is a document's Target as terms: its head, the pair of its last
// two words, and all of them.
type target struct {
	head, pair string
	words      []string
}

// targetIDs is a target by the index's ids.
type targetIDs struct {
	head, pair int32
	words      []int32
}

// intern returns s's id, numbering it if new; -1 for "".
func (ix *Index) intern(s string) int32 {
	if s == "" {
		return -1
	}
	id, ok := ix.ids[s]
	if !ok {
		id = int32(len(ix.ids))
		ix.ids[s] = id
	}
	return id
}

func (ix *Index) internTarget(t target) targetIDs {
	ids := targetIDs{head: ix.intern(t.head), pair: ix.intern(t.pair)}
	if len(t.words) > 0 {
		ids.words = make([]int32, len(t.words))
		for i, w := range t.words {
			ids.words[i] = ix.intern(w)
		}
	}
	return ids
}

// The marks of an id: which of the query plan's sets hold its string.
const (
	markPrimary uint8 = 1 << iota
	markTerm
	markVerb
	markNamed
	markSaid
)

// marks returns, by id, which of p's sets hold each string the index
// numbered: one lookup per term of the query.
func (ix *Index) marks(p *plan) []uint8 {
	m := make([]uint8, len(ix.ids))
	for _, set := range []struct {
		terms map[string]bool
		mark  uint8
	}{{p.primary, markPrimary}, {p.terms, markTerm}, {p.verbs, markVerb}, {p.named, markNamed}, {p.said, markSaid}} {
		for t, ok := range set.terms {
			if id, known := ix.ids[t]; ok && known {
				m[id] |= set.mark
			}
		}
	}
	return m
}

// has reports whether id (-1 for none) carries mark.
func has(m []uint8, id int32, mark uint8) bool {
	return id >= 0 && m[id]&mark != 0
}

type posting struct {
	doc int32
	// tf is the document's BM25F pseudo-frequency of the term: the sum
	// over fields of weight * frequency / length normalisation.
	tf float32
}

// New indexes docs. The index keeps no reference to them.
func New(docs []Document) *Index {
	ix := &Index{n: len(docs), postings: make(map[string][]posting), keys: make(map[string]int, len(docs)),
		actions: make([]string, len(docs)), columns: make([]uint8, len(docs)), several: make([]bool, len(docs)), superseded: make([]bool, len(docs)), groups: make([]int32, len(docs))}
	nf := 0
	for _, d := range docs {
		nf = max(nf, len(d.Fields))
	}
	terms := make([][][]string, len(docs))
	avg := make([]float64, nf)
	groupIDs := map[string]int32{}
	for i, d := range docs {
		terms[i] = make([][]string, len(d.Fields))
		for f, fld := range d.Fields {
			if fld.Weight > 0 {
				ts := Terms(fld.Text)
				avg[f] += float64(len(ts))
				if fld.Pairs {
					for j, n := 0, len(ts); j+1 < n; j++ {
						ts = append(ts, ts[j]+pairSep+ts[j+1])
					}
				}
				terms[i][f] = ts
			}
		}
		if a := Terms(d.Action); len(a) > 0 {
			ix.actions[i] = a[0]
		}
		ix.columns[i] = uint8(kindColumn(d.Kind, d.ReadOnly))
		ix.several[i] = d.Several
		ix.superseded[i] = d.Superseded
		g, ok := groupIDs[d.Group]
		if !ok {
			g = int32(len(groupIDs))
			groupIDs[d.Group] = g
		}
		ix.groups[i] = g
		if k := normKey(d.Key); k != "" {
			if _, dup := ix.keys[k]; !dup {
				ix.keys[k] = i
			}
		}
		ix.addInitialisms(d.Key)
	}
	ix.nGroups = len(groupIDs)
	ix.ids = make(map[string]int32)
	ix.actionIDs = make([]int32, len(docs))
	ix.targetIDs = make([]targetIDs, len(docs))
	ix.wholeIDs = make([]targetIDs, len(docs))
	for i, d := range docs {
		ix.actionIDs[i] = ix.intern(ix.actions[i])
		ix.targetIDs[i] = ix.internTarget(newTarget(d.Target))
		ix.wholeIDs[i] = ix.internTarget(newTarget(d.Whole))
	}
	ix.verbs = make(map[string]bool)
	for _, a := range ix.actions {
		if a != "" {
			ix.verbs[a] = true
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
	for a := range ix.initialisms {
		if _, ok := ix.postings[a]; ok {
			// A term of its own (an API that names itself "cas") is not
			// read as initials.
			delete(ix.initialisms, a)
		}
	}
	ix.vocab = make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		if !strings.Contains(t, pairSep) {
			ix.vocab = append(ix.vocab, t)
		}
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
	// noun: the API noun a user's word means (vocabulary.txt's nouns).
	noun bool
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

// derivedEndings are the endings an unknown word may lose to find the
// indexed term it derives from ("zonal": zon+al). Cutting any letters
// would read a name as a rare identifier it happens to begin ("alice"
// is not "ali" of AliOSS).
var derivedEndings = map[string]bool{
	"s": true, "e": true, "y": true, "al": true, "ic": true, "ly": true, "er": true, "or": true,
	"ed": true, "es": true, "ing": true, "ion": true, "ive": true, "ity": true, "ous": true,
	"ful": true, "ary": true, "ize": true, "ise": true, "ial": true, "ual": true,
}

// addInitialisms records the initials of each part of a key (split at
// underscores) that is a name of two to five words.
func (ix *Index) addInitialisms(key string) {
	for part := range strings.SplitSeq(key, "_") {
		words := splitIdentifier(part)
		if len(words) < 2 || len(words) > 5 {
			continue
		}
		var b strings.Builder
		for _, w := range words {
			b.WriteByte(w[0])
		}
		a := b.String()
		if ix.initialisms == nil {
			ix.initialisms = make(map[string][]string)
		}
		if len(ix.initialisms[a]) > 0 {
			continue
		}
		for _, w := range words {
			ix.initialisms[a] = append(ix.initialisms[a], Stem(w))
		}
	}
}

// splitIdentifier splits a name at its case changes into lowercase
// words, digits dropped (ContentAddressableStorage: content,
// addressable, storage).
func splitIdentifier(s string) []string {
	return wordsplit.Split(s, wordsplit.Rules{Digits: wordsplit.DigitsDrop, ASCII: true})
}

// minCompoundPart is the shortest half of a joined word: shorter halves
// find words in most words ("peruse": per, use).
const minCompoundPart = 4

// compoundWeight is the weight of each half of a query word written as
// one that the index has as two ("statestore": state, store).
const compoundWeight = 0.8

// expansions are what an unknown query word may stand for: the name it
// abbreviates (initialisms) or the two indexed words it joins.
func (ix *Index) expansions(tok string) []alternative {
	var alts []alternative
	for _, t := range ix.initialisms[tok] {
		alts = append(alts, alternative{term: t, weight: 1, noun: true})
	}
	for i := minCompoundPart; i <= len(tok)-minCompoundPart; i++ {
		a, b := Stem(tok[:i]), Stem(tok[i:])
		if _, ok := ix.postings[a]; !ok {
			continue
		}
		if _, ok := ix.postings[b]; ok {
			alts = append(alts, alternative{term: a, weight: compoundWeight}, alternative{term: b, weight: compoundWeight})
			break
		}
	}
	return alts
}

// prefixes are the indexed terms an unknown word begins, and the one that
// begins it ("zonal" for "zone").
func (ix *Index) prefixes(tok string) []alternative {
	var alts []alternative
	i, _ := slices.BinarySearch(ix.vocab, tok)
	for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], tok); i++ {
		alts = append(alts, alternative{term: ix.vocab[i], weight: prefixWeight})
	}
	for cut := 1; cut <= maxTruncate && len(tok)-cut >= minPrefix; cut++ {
		if !derivedEndings[tok[len(tok)-cut:]] {
			continue
		}
		if _, ok := ix.postings[tok[:len(tok)-cut]]; ok {
			alts = append(alts, alternative{term: tok[:len(tok)-cut], weight: prefixWeight})
			break
		}
	}
	return alts
}

// Search returns up to limit documents ranked by relevance to query, best
// first; ties keep the documents' order. A query equal to a document's
// Key puts that document first whatever its score. Documents that match
// no query word are not returned (SearchLoose answers loose matches
// where nothing matches).
//
// The score is BM25F over the documents' fields, the query's words
// widened by the vocabulary, times the structure factors: the action and
// kind the query asks for (ActionBoost, kindFactor), the thing it names
// (TargetBoost), how much of the query the document's group knows
// (coherenceFloor), and whether a preferred version of the document is
// there too (SupersededFactor).
func (ix *Index) Search(query string, limit int) []Hit {
	return ix.SearchWithin(query, limit, nil)
}

// SearchWithin is Search over the documents for which keep returns true
// (nil keeps all).
func (ix *Index) SearchWithin(query string, limit int, keep func(doc int) bool) []Hit {
	if limit <= 0 || ix.n == 0 {
		return nil
	}
	p := vocabulary().read(query, ix)
	// Dense per-document arrays: a query touches a good share of the
	// documents of a large catalog, and maps would cost more.
	// covered[d] is the weight of the query's groups document d matches;
	// cover[g] is the weight of the query's groups that group g knows,
	// and seen[g] marks g for the query group being scored.
	// The scratch goes back to the pool only from a query that ended: one
	// that panicked (in keep) may have left any of it set.
	sc := ix.getScratch()
	scores, best, covered, cover, seen := sc.scores, sc.best, sc.covered, sc.cover, sc.seen
	total := 0.0
	asked := 0.0 // the weight of the groups some document matches
	touched, matched := sc.touched, sc.matched
	for gi, alts := range p.groups {
		// A word's contribution is its best alternative's, so a verb and
		// its synonyms in one tool name do not add up. A verb's synonym is
		// worth no more than the word itself: matching a rare synonym
		// ("lookup") of a common word ("get") says no more than the word.
		// The API's noun that a user's word means is worth what the word
		// is: "instance" for a rare "vm" says as much as "vm".
		own := -1.0
		if ps := ix.postings[alts[0].term]; len(ps) > 0 {
			own = ix.idf(len(ps))
		}
		touched = touched[:0]
		groupIDF := 0.0
		for _, a := range alts {
			ps := ix.postings[a.term]
			if len(ps) == 0 {
				continue
			}
			idf := ix.idf(len(ps))
			switch {
			case own < 0:
			case a.noun:
				idf = own
			default:
				idf = min(idf, own)
			}
			groupIDF = max(groupIDF, a.weight*idf)
			touched = accumulate(ps, a.weight*idf, keep, best, touched)
		}
		w := p.weights[gi]
		if len(touched) > 0 {
			total += w * groupIDF
			asked += w
		}
		for _, d := range touched {
			if scores[d] == 0 {
				matched = append(matched, d)
			}
			scores[d] += w * best[d]
			covered[d] += w
			best[d] = 0
			if g := ix.groups[d]; seen[g] != gi {
				if seen[g] < 0 {
					sc.groupsSeen = append(sc.groupsSeen, g)
				}
				seen[g] = gi
				cover[g] += w * groupIDF
			}
		}
	}
	exact := -1
	if i, ok := ix.keys[normKey(query)]; ok && (keep == nil || keep(i)) {
		exact = i
	}
	hits := make([]Hit, 0, len(matched)+1)
	top := 0.0
	marks := ix.marks(&p)
	for _, d := range matched {
		s := scores[d]
		switch a := ix.actionIDs[d]; {
		case a < 0:
		case has(marks, a, markVerb) && has(marks, a, markSaid):
			s *= ActionBoost
		case has(marks, a, markVerb) || has(marks, a, markNamed):
			s *= SynonymActionBoost
		}
		if len(p.kinds) > 0 {
			f := 0.0
			for k := range p.kinds {
				f = max(f, kindFactor[k][ix.columns[d]])
			}
			s *= f
		}
		s *= targetFactor(marks, &ix.targetIDs[d], len(p.primary) > 0)
		if w := &ix.wholeIDs[d]; w.head >= 0 && len(p.primary) > 0 && !has(marks, w.head, markTerm) && !has(marks, w.pair, markTerm) {
			s *= WholeMiss
		}
		switch {
		case !p.several:
		case ix.several[d]:
			s *= SeveralBoost
		case ix.columns[d] != 0 && ix.columns[d] != 1 && ix.columns[d] != 5:
			// A write of one thing, where all were asked for.
			s *= OneOfSeveral
		}
		if ix.superseded[d] && !p.version {
			s *= SupersededFactor
		}
		// Coordination: a document that matches every part of the
		// request beats one that matches a part of it very well.
		s *= math.Sqrt(covered[d] / asked)
		if total > 0 {
			s *= coherenceFloor + (1-coherenceFloor)*cover[ix.groups[d]]/total
		}
		top = max(top, s)
		if int(d) != exact {
			hits = append(hits, Hit{Doc: int(d), Score: s})
		}
	}
	sc.touched, sc.matched = touched, matched
	ix.putScratch(sc)
	hits = topHits(hits, limit)
	if exact >= 0 {
		hits = slices.Insert(hits, 0, Hit{Doc: exact, Score: top + 1})
	}
	return hits[:min(limit, len(hits))]
}

// accumulate scores the postings of one alternative of a query group,
// weighted by w (its weight times its idf), into best, each document's
// best score in the group so far, and returns touched with the documents
// the group had not touched yet appended (BM25's saturation of the term
// frequency, k1).
func accumulate(ps []posting, w float64, keep func(doc int) bool, best []float64, touched []int32) []int32 {
	for _, p := range ps {
		if keep != nil && !keep(int(p.doc)) {
			continue
		}
		tf := float64(p.tf)
		s := w * tf * (k1 + 1) / (tf + k1)
		if best[p.doc] == 0 {
			touched = append(touched, p.doc)
		}
		best[p.doc] = max(best[p.doc], s)
	}
	return touched
}

// byRank orders hits best first, ties by document.
func byRank(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.Doc, b.Doc)
}

// topHits returns the limit best of hits, in rank order (byRank): what
// sorting them all and keeping the first limit gives, without sorting
// the thousands a common word matches in a large catalog. hits is
// reordered.
func topHits(hits []Hit, limit int) []Hit {
	if limit >= len(hits) || limit*8 >= len(hits) {
		slices.SortFunc(hits, byRank)
		return hits[:min(limit, len(hits))]
	}
	// A heap of the best limit so far, its worst at the root.
	h := hits[:limit]
	worse := func(i, j int) bool { return byRank(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			w := l
			if r := l + 1; r < len(h) && worse(r, l) {
				w = r
			}
			if !worse(w, i) {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range hits[limit:] {
		if byRank(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, byRank)
	return h
}

func newTarget(s string) target {
	t := Terms(s)
	if len(t) == 0 {
		return target{}
	}
	tg := target{head: t[len(t)-1], words: t}
	if len(t) > 1 {
		tg.pair = t[len(t)-2] + pairSep + t[len(t)-1]
	}
	return tg
}

// targetFactor is how well the query, by its marks, names a document's
// target; primary says whether the query has primary terms.
func targetFactor(m []uint8, t *targetIDs, primary bool) float64 {
	if t.head < 0 {
		return 1
	}
	f := 1.0
	switch {
	case has(m, t.head, markPrimary) || has(m, t.pair, markPrimary):
		f = TargetBoost
	case has(m, t.head, markTerm) || has(m, t.pair, markTerm):
		f = OtherTargetBoost
	case primary:
		return TargetMiss
	default:
		return 1
	}
	if len(t.words) > 1 {
		all := has(m, t.pair, markTerm)
		if !all {
			all = true
			for _, w := range t.words {
				all = all && has(m, w, markTerm)
			}
		}
		if all {
			f *= FullTargetBoost
		}
	}
	return f
}
