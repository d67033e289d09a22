package search

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// A query is read in three steps before anything is ranked:
//
//  1. Values are set aside: what people paste or name in a request
//     (us-east1-b, n2-standard-8, gs://bucket/x, alice@example.com, JSON,
//     quoted text, the word after "called" or "named") says which one,
//     not what to do, and its pieces would match unrelated tools. A
//     hyphenated name made of plain words (checkout-svc) is kept at a
//     low weight: it sometimes holds the resource's kind.
//  2. The vocabulary's phrases are found (vocabulary.txt): question forms
//     ("which ... do I have" asks for a list), idioms ("get rid of" is a
//     delete) and the nouns and verbs they name.
//  3. Every remaining word becomes a group of terms that may match it:
//     the word, its verb synonyms, and the API nouns people mean by it.

// queryWord is one word of a query, stemmed, with its weight.
type queryWord struct {
	stem   string
	raw    string
	weight float64
}

// Weights of words that say less about what the request is for.
const (
	// nameWeight is a word inside a name: hyphenated, dotted, CamelCase
	// (checkout-svc, OnboardCustomer).
	nameWeight = 0.3
	// asideWeight is a word of a clause that explains rather than asks:
	// "... so nobody can delete it", "..., it's not responding", "before
	// I patch it".
	asideWeight = 0.25
)

// subordinators start a clause that explains the request rather than
// making it; relatives start one that qualifies a noun already named;
// commentary starts, after a comma, a remark about the request.
var (
	subordinators = map[string]bool{"so": true, "because": true, "since": true, "before": true, "while": true,
		"until": true, "although": true, "though": true, "unless": true, "whereas": true, "once": true, "cause": true}
	relatives  = map[string]bool{"that": true, "who": true, "whose": true, "which": true, "where": true}
	commentary = map[string]bool{"it": true, "it's": true, "its": true, "nobody": true, "we": true, "we're": true,
		"we've": true, "they": true, "he": true, "she": true, "i": true, "i'm": true, "i've": true, "that's": true,
		"thanks": true, "thank": true, "which": true, "otherwise": true, "nothing": true, "no": true}
)

// queryWords splits a query into words, setting values aside and
// weighing down asides (step 1).
func queryWords(query string) []queryWord {
	var out []queryWord
	skipNext := false
	content := 0        // content words so far in the sentence
	aside := false      // in an aside until the sentence ends
	untilComma := false // in a sentence-initial aside until a comma
	afterComma := false // the previous field was a comma
	fields := splitQuery(query)
	for i, f := range fields {
		switch f.sep {
		case '.':
			content, aside, untilComma, afterComma = 0, false, false, false
			continue
		case ',':
			untilComma, afterComma = false, true
			continue
		}
		wasComma := afterComma
		afterComma = false
		if skipNext {
			skipNext = false
			continue
		}
		if f.quoted {
			continue
		}
		w := f.text
		lw := strings.ToLower(w)
		switch {
		case lw == "called" || lw == "named":
			skipNext = true
			continue
		case subordinators[lw] && content > 0:
			aside = true
		case subordinators[lw]:
			untilComma = true
		case relatives[lw] && content > 0 && i+1 < len(fields) && clauseStart(fields[i+1].text):
			aside = true
		case wasComma && commentary[lw] && content > 0:
			aside = true
		}
		weight := 1.0
		var parts []string
		switch {
		case isValue(w):
			// A name with a number (api-prod-2, operation-1699-abc) may
			// still say what it names: keep its plain words, as a name.
			for _, p := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
				if len(p) >= 3 && !isValue(p) && strings.IndexFunc(p, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
					parts = append(parts, p)
				}
			}
			weight = nameWeight
		case strings.ContainsAny(w, "-_.") && vocabulary().knows(w):
			// fine-tune, read-only, dead-letter: words, not a name.
			parts = []string{w}
		case strings.ContainsAny(w, "-_.") || innerCapital(w):
			parts, weight = []string{w}, nameWeight
		default:
			parts = []string{w}
		}
		if aside || untilComma {
			weight = min(weight, asideWeight)
		}
		for _, p := range parts {
			for _, t := range Tokens(p) {
				out = append(out, queryWord{stem: Stem(t), raw: t, weight: weight})
				if !stopwords[t] {
					content++
				}
			}
		}
	}
	return out
}

// clauseStart reports whether a relative pronoun's next word starts a
// clause ("that failed", "that aren't attached", "which is"), not a noun
// ("nuke that vm").
func clauseStart(next string) bool {
	w := strings.ToLower(next)
	switch w {
	case "is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "should", "do", "does",
		"did", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "can't", "won't", "don't", "doesn't", "didn't",
		"still", "never", "no", "not", "nobody", "we", "i", "you", "they", "it", "uses", "use", "run", "runs", "belong", "belongs":
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed")
}

// innerCapital reports whether w has a capital after a lower-case letter
// (OnboardCustomer, databaseReader): a name written in a sentence.
func innerCapital(w string) bool {
	var prev rune
	for _, r := range w {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			return true
		}
		prev = r
	}
	return false
}

type queryField struct {
	text   string
	quoted bool
	// sep is ',' or '.' (any sentence end) for a separator, 0 for text.
	sep byte
}

// typographic turns the quotes a phone or a word processor types into the
// ASCII ones the query's reading knows ("the server’s disks", “prod”).
var typographic = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u2018", "'", "\u2019", "'", "\u00ab", `"`, "\u00bb", `"`)

// splitQuery splits at spaces, keeping quoted text and JSON as single
// quoted fields (a quote or brace never closed is punctuation), marking
// commas and sentence ends, and trimming punctuation around words.
func splitQuery(q string) []queryField {
	q = typographic.Replace(q)
	var out []queryField
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ',' || c == ';':
			out = append(out, queryField{sep: ','})
			i++
		case c == '!' || c == '?':
			out = append(out, queryField{sep: '.'})
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '(' || c == ')':
			i++
		case c == '"' || c == '`':
			end := strings.IndexByte(q[i+1:], c)
			if end < 0 {
				// A quote never closed quotes nothing: its words are
				// the request's.
				i++
				continue
			}
			out = append(out, queryField{text: q[i+1 : i+1+end], quoted: true})
			i += end + 2
		case c == '{' || c == '[':
			closing := byte('}')
			if c == '[' {
				closing = ']'
			}
			depth, j := 0, i
			for ; j < len(q); j++ {
				if q[j] == c {
					depth++
				} else if q[j] == closing {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j == len(q) {
				i++ // never closed: punctuation, as an unclosed quote
				continue
			}
			out = append(out, queryField{text: q[i : j+1], quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(q) && !strings.ContainsRune(" \t\n,;!?()\"`{[", rune(q[j])) {
				j++
			}
			w := q[i:j]
			end := strings.HasSuffix(w, ".")
			w = strings.TrimRight(w, ".:'")
			w = strings.TrimLeft(w, "'")
			w = strings.TrimSuffix(w, "'s")
			if w != "" {
				out = append(out, queryField{text: w})
			}
			if end {
				out = append(out, queryField{sep: '.'})
			}
			i = j
		}
	}
	return out
}

// isValue reports whether a query word is a value rather than a word of
// the request: it has a digit, or is an address, a path or an
// assignment.
func isValue(w string) bool {
	if strings.Contains(w, "://") || strings.ContainsAny(w, "@=/\\:") {
		return true
	}
	for _, r := range w {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// plan is a query read for ranking.
type plan struct {
	// groups are the query's words with their alternatives; weights
	// scale each group.
	groups  [][]alternative
	weights []float64
	// kinds are the standard methods the query asks for.
	kinds map[string]bool
	// verbs are the stems of the actions it may ask for: its verbs and
	// their synonyms (asked), and any other word of it (named), since
	// an API's own verb may be a word people use as a noun ("commit",
	// "suggestions").
	verbs map[string]bool
	named map[string]bool
	// said are the stems the query itself used.
	said map[string]bool
	// several: the query asks to change all or every one of a kind.
	several bool
	// version: the query names an API version or a release stage
	// (v1beta1, beta, preview), so it may want a Superseded document.
	version bool
	// terms are every term an alternative may match, and primary the
	// terms of the thing the request is about: the first noun after its
	// verb (or an IAM policy a question form names).
	terms, primary map[string]bool
}

// read turns a query into a plan (steps 2 and 3).
func (v *vocab) read(query string, ix *Index) plan {
	words := queryWords(query)
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = w.stem
	}
	p := plan{kinds: map[string]bool{}, verbs: map[string]bool{}, named: map[string]bool{}, said: map[string]bool{}, terms: map[string]bool{}, primary: map[string]bool{}}
	p.version = namesVersion(query)
	for _, s := range stems {
		p.said[s] = true
	}
	used := make([]bool, len(words))
	// slots place the groups in the query, so that the first noun
	// after the verb can be found whether a word or a phrase named it.
	var slots []slot
	asked := map[string]bool{} // kinds asked by question forms
	var named []string         // nouns a question form names
	for i := range words {
		for _, ri := range v.byFirst[stems[i]] {
			r := &v.rules[ri]
			pos, ok := r.match(stems, i)
			if !ok || anyUsed(used, pos) {
				continue
			}
			for _, j := range pos {
				used[j] = true
			}
			weight := words[pos[0]].weight
			if r.ask && weight >= 1 {
				for _, k := range r.kinds {
					asked[k] = true
				}
				named = append(named, r.nouns...)
			}
			first := len(p.groups)
			p.addRule(r, weight)
			for g := first; g < len(p.groups); g++ {
				isVerb := g == first && weight >= 1 && (len(r.verbs) > 0 || len(r.kinds) > 0)
				slots = append(slots, slot{pos: pos[0], group: g, verb: isVerb})
			}
		}
	}
	// The words left: each is a group of the terms it may match.
	content := false
	for i := 0; i < len(words); i++ {
		if !used[i] && showWords[words[i].raw] && (!questionWords[words[i].raw] || !content) {
			p.kinds[showKind(words, i)] = true
			slots = append(slots, slot{pos: i, group: -1, verb: true})
			if !questionWords[words[i].raw] {
				// "show" asks for a read; it is not what to read.
				p.verbs[words[i].stem] = true
				continue
			}
		}
		if used[i] || stopwords[words[i].raw] || stopwords[words[i].stem] {
			continue
		}
		w := words[i]
		at := i
		// Two adjacent words the index holds as one term ("back up",
		// "end point") are taken as that term.
		if i+1 < len(words) && !used[i+1] {
			if joined := Stem(w.raw + words[i+1].raw); ix.postings[joined] != nil {
				w.stem, w.raw = joined, w.raw+words[i+1].raw
				i++
			}
		}
		isVerb := p.addWord(v, w, ix)
		// A request that starts with an action of the catalog starts
		// with a verb ("feed the lion"), known to the vocabulary or not.
		isVerb = isVerb || !content && ix.verbs[w.stem]
		content = true
		slots = append(slots, slot{pos: at, group: len(p.groups) - 1, verb: isVerb})
	}
	// What a question form names is what it is about (who has access
	// to X: X's IAM policy); else the first noun after the verb (or the
	// first noun, when nothing asks for an action).
	primary := -1
	var modifiers []int // the other groups of the object's compound
	if len(named) == 0 {
		slices.SortStableFunc(slots, func(a, b slot) int { return a.pos - b.pos })
		seenVerb := !slices.ContainsFunc(slots, func(s slot) bool { return s.verb })
		last := -1 // the position of the noun phrase's last word so far
		for _, s := range slots {
			noun := !s.verb && s.group >= 0 && p.weights[s.group] >= 1 && p.indexed(s.group, ix)
			switch {
			case primary >= 0 && noun && s.pos == last+1:
				// A compound names the request's object too: an image
				// dataset is a dataset, a workflow task is the
				// workflow's; the last word is its head.
				modifiers = append(modifiers, primary)
				primary, last = s.group, s.pos
			case primary >= 0:
			case s.verb:
				seenVerb = true
			case seenVerb && noun:
				primary, last = s.group, s.pos
			}
		}
	}
	// A pair of adjacent content words the index holds as a pair
	// ("machine type", "backup schedule") is a group of its own: it
	// ranks the tool named by both above those naming either.
	for i := 0; i+1 < len(words); i++ {
		if used[i] || used[i+1] || words[i].weight < 1 || words[i+1].weight < 1 {
			continue
		}
		pair := words[i].stem + pairSep + words[i+1].stem
		if ix.postings[pair] != nil {
			p.add([]alternative{{term: pair, weight: 1}}, pairWeight)
			if primary >= 0 && p.groupHas(primary, words[i].stem, words[i+1].stem) {
				p.primary[pair] = true
			}
		}
	}
	switch {
	case len(named) > 0:
		for _, n := range named {
			p.primary[n] = true
		}
	case primary >= 0:
		for _, g := range append(modifiers, primary) {
			for _, a := range p.groups[g] {
				p.primary[a.term] = true
			}
		}
		first := primary
		if len(modifiers) > 0 {
			first = modifiers[0]
		}
		p.weights[first] *= primaryWeight
	}
	// Doing something to all or every one of a kind ("terminate every
	// LegacySync workflow", "cancel all workflows where ...") is a batch
	// operation where an API has one.
	if quantified(words, used) && (p.kinds[KindUpdate] || p.kinds[KindDelete] || p.kinds[KindCreate] || p.writes(v)) {
		p.add([]alternative{{term: "batch", weight: 1}, {term: "bulk", weight: 1}}, batchWeight)
		p.several = true
	}
	// A question form says what is asked better than the verbs inside
	// it ("what's the retention set to" reads, whatever "set" says).
	if len(asked) > 0 {
		p.kinds = asked
	}
	return p
}

// versionRE matches an API version as people write it, alone or in a
// name (v1, v2beta3, v1p1beta1, v1alpha).
// Compiled on the first query, not at every start.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v\d+(p\d+)?((alpha|beta)\d*)?$`) })

// stages are the release stages people ask for by name.
var stages = map[string]bool{"alpha": true, "beta": true, "preview": true, "experimental": true}

// namesVersion reports whether query names an API version or a release
// stage: as a word ("the beta API", "v1beta1") or a part of a dotted or
// slashed name (google.cloud.compute.v1beta), not of a hyphenated one (a
// resource's name, clicks-v1). Read from the query itself: queryWords
// sets a version aside as a value, since it has digits.
func namesVersion(query string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
	}) {
		if stages[w] || versionRE().MatchString(w) {
			return true
		}
	}
	return false
}

// batchWeight scales the batch group a quantified write adds.
const batchWeight = 0.7

// quantified reports whether the query speaks of all or every one of a
// plural ("all workflows", "every LegacySync workflow that's running").
func quantified(words []queryWord, used []bool) bool {
	for i, w := range words {
		if used[i] || w.raw != "all" && w.raw != "every" && w.raw != "each" {
			continue
		}
		for j := i + 1; j < len(words) && j <= i+4; j++ {
			if r := words[j].raw; words[j].weight >= 1 && (strings.HasSuffix(r, "s") || w.raw != "all") && !stopwords[r] {
				return true
			}
		}
	}
	return false
}

// writes reports whether the query asks for a verb that changes things.
func (p *plan) writes(v *vocab) bool {
	for verb := range p.verbs {
		if v.writeVerbs[verb] {
			return true
		}
	}
	return false
}

// slot is a group's place in the query: the position of its first
// word, and whether it asks for an action (group -1: a show word).
type slot struct {
	pos, group int
	verb       bool
}

// primaryWeight scales the group of the thing the request is about: of a
// compound ("backup schedule"), its first word's group, the word that
// tells it from the other things of its kind.
const primaryWeight = 1.5

// indexed reports whether some alternative of group g is in the index: a
// word no tool has says nothing about what the request is about.
func (p *plan) indexed(g int, ix *Index) bool {
	for _, a := range p.groups[g] {
		if ix.postings[a.term] != nil {
			return true
		}
	}
	return false
}

// groupHas reports whether group g matches a or b.
func (p *plan) groupHas(g int, a, b string) bool {
	for _, alt := range p.groups[g] {
		if alt.term == a || alt.term == b {
			return true
		}
	}
	return false
}

// pairWeight scales the group of a pair of query words found as a pair.
const pairWeight = 0.5

func anyUsed(used []bool, pos []int) bool {
	for _, j := range pos {
		if used[j] {
			return true
		}
	}
	return false
}

func (p *plan) add(alts []alternative, weight float64) {
	p.groups = append(p.groups, alts)
	p.weights = append(p.weights, weight)
	for _, a := range alts {
		p.terms[a.term] = true
	}
}

// addRule records what a phrase of the vocabulary means; weight is its
// first word's. A phrase in an aside or a name is read for its words
// only: it asks for nothing.
func (p *plan) addRule(r *rule, weight float64) {
	asks := weight >= 1
	for _, k := range r.kinds {
		if asks {
			p.kinds[k] = true
		}
	}
	var alts []alternative
	for _, verb := range r.verbs {
		if asks {
			p.verbs[verb] = true
		}
		alts = append(alts, alternative{term: verb, weight: 1})
	}
	// A phrase of a kind ("get rid of", "which ... do I have") matches
	// the kind's own words ("which topics do I have" finds ListTopics).
	for _, k := range r.kinds {
		for _, s := range vocabulary().kindWords[k] {
			if asks {
				p.verbs[s] = true
			}
			alts = append(alts, alternative{term: s, weight: SynonymWeight})
		}
	}
	if len(alts) > 0 {
		p.add(dedupe(alts), weight)
	}
	for _, n := range r.nouns {
		p.add([]alternative{{term: n, weight: 1}}, weight)
	}
}

// showWords ask for a list when the thing after them is plural (show me
// the health checks, which instances are in the group, any tunnels down)
// and for one thing otherwise (show me the config).
var showWords = map[string]bool{"show": true, "see": true, "display": true, "check": true, "view": true,
	"find": true, "look": true, "which": true, "what": true, "any": true}

// questionWords are show words only at the start of a question ("which
// disks...", not "the disk which...").
var questionWords = map[string]bool{"which": true, "what": true, "any": true}

// addWord adds one word of the query and what it may mean, and reports
// whether it asks for an action.
func (p *plan) addWord(v *vocab, w queryWord, ix *Index) bool {
	alts := []alternative{{term: w.stem, weight: 1}}
	// A word of an aside or a name is read for what it matches; only the
	// request's own words ask for something.
	asks := w.weight >= 1
	isVerb := false
	for _, k := range v.kindOf[w.stem] {
		if asks {
			p.kinds[k] = true
			isVerb = true
		}
		for _, s := range v.kindWords[k] {
			if asks {
				p.verbs[s] = true
			}
			if s != w.stem {
				alts = append(alts, alternative{term: s, weight: SynonymWeight})
			}
		}
	}
	for _, verb := range v.verbOf[w.stem] {
		if asks {
			p.verbs[verb] = true
			isVerb = true
		}
		if verb != w.stem {
			alts = append(alts, alternative{term: verb, weight: SynonymWeight})
		}
	}
	switch {
	case isVerb:
		p.verbs[w.stem] = true
	case asks:
		p.named[w.stem] = true
	}
	for _, n := range v.nounOf[w.stem] {
		alts = append(alts, alternative{term: n, weight: SynonymWeight, noun: true})
	}
	if _, ok := ix.postings[w.stem]; !ok && w.weight >= 1 {
		if len(w.raw) >= 2 {
			alts = append(alts, ix.expansions(strings.ToLower(w.raw))...)
		}
		if len(w.raw) >= minPrefix {
			alts = append(alts, ix.prefixes(w.raw)...)
		}
	}
	p.add(dedupe(alts), w.weight)
	return isVerb
}

// showKind is the kind a show word asks for: a list when the noun after
// it is plural.
func showKind(words []queryWord, i int) string {
	if pluralAfter(words, i) {
		return KindList
	}
	return KindGet
}

// pluralAfter reports whether the noun phrase in the five words after
// position i ends in a plural.
func pluralAfter(words []queryWord, i int) bool {
	last := ""
	for j := i + 1; j < len(words) && j <= i+5; j++ {
		r := words[j].raw
		if stopwords[r] || r == "me" || r == "us" {
			if last != "" {
				break
			}
			continue
		}
		last = r
	}
	return len(last) >= 3 && strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss") && !strings.HasSuffix(last, "us") && !strings.HasSuffix(last, "is")
}

func dedupe(alts []alternative) []alternative {
	out := alts[:0]
	for _, a := range alts {
		dup := false
		for i, b := range out {
			if b.term == a.term {
				out[i].weight = max(b.weight, a.weight)
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}
