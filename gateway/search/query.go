package search

import (
	"strings"
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

// nameWeight is the weight of a word inside a hyphenated or dotted name.
const nameWeight = 0.3

// plan is a query read for ranking.
type plan struct {
	// groups are the query's words with their alternatives; weights
	// scale each group.
	groups  [][]alternative
	weights []float64
	// kinds are the standard methods the query asks for.
	kinds map[string]bool
	// verbs are the stems of the actions it asks for, synonyms included.
	verbs map[string]bool
	// terms are every term an alternative may match, for the target
	// check.
	terms map[string]bool
}

// queryWords splits a query into words, setting values aside (step 1).
func queryWords(query string) []queryWord {
	var out []queryWord
	fields := splitQuery(query)
	skipNext := false
	for _, f := range fields {
		if skipNext {
			skipNext = false
			continue
		}
		w := f.text
		if f.quoted || isValue(w) {
			continue
		}
		lw := strings.ToLower(w)
		if lw == "called" || lw == "named" {
			skipNext = true
			continue
		}
		weight := 1.0
		if strings.ContainsAny(w, "-_.") {
			weight = nameWeight
		}
		for _, t := range Tokens(w) {
			out = append(out, queryWord{stem: Stem(t), raw: t, weight: weight})
		}
	}
	return out
}

type queryField struct {
	text   string
	quoted bool
}

// splitQuery splits at spaces, keeping quoted text and JSON as single
// quoted fields, and trimming punctuation around words.
func splitQuery(q string) []queryField {
	var out []queryField
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ',' || c == ';' || c == '!' || c == '?' || c == '(' || c == ')':
			i++
		case c == '"' || c == '`':
			end := strings.IndexByte(q[i+1:], c)
			if end < 0 {
				end = len(q) - i - 1
			}
			out = append(out, queryField{text: q[i+1 : i+1+end], quoted: true})
			i += end + 2
		case c == '{' || c == '[':
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			depth, j := 0, i
			for ; j < len(q); j++ {
				if q[j] == c {
					depth++
				} else if q[j] == close {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			out = append(out, queryField{text: q[i:min(j+1, len(q))], quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(q) && !strings.ContainsRune(" \t\n,;!?()\"`{[", rune(q[j])) {
				j++
			}
			w := strings.TrimRight(q[i:j], ".:'")
			w = strings.TrimLeft(w, "'")
			if strings.HasSuffix(w, "'s") {
				w = w[:len(w)-2]
			}
			if w != "" {
				out = append(out, queryField{text: w})
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

// read turns a query into a plan (steps 2 and 3).
func (v *vocab) read(query string, ix *Index) plan {
	words := queryWords(query)
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = w.stem
	}
	p := plan{kinds: map[string]bool{}, verbs: map[string]bool{}, terms: map[string]bool{}}
	used := make([]bool, len(words))
	for i := range words {
		for ri := range v.rules {
			r := &v.rules[ri]
			pos, ok := r.match(stems, i)
			if !ok || anyUsed(used, pos) {
				continue
			}
			for _, j := range pos {
				used[j] = true
			}
			p.addRule(r)
		}
	}
	// The words left: each is a group of the terms it may match.
	for i := 0; i < len(words); i++ {
		if used[i] || stopwords[words[i].raw] || stopwords[words[i].stem] {
			continue
		}
		w := words[i]
		// Two adjacent words the index holds as one term ("back up",
		// "end point") are taken as that term.
		if i+1 < len(words) && !used[i+1] {
			if joined := Stem(w.raw + words[i+1].raw); ix.postings[joined] != nil {
				w.stem, w.raw = joined, w.raw+words[i+1].raw
				i++
			}
		}
		p.addWord(v, w, ix, words, i)
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
			p.add([]alternative{{pair, 1}}, pairWeight)
		}
	}
	return p
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

// addRule records what a phrase of the vocabulary means.
func (p *plan) addRule(r *rule) {
	for _, k := range r.kinds {
		p.kinds[k] = true
	}
	if len(r.verbs) > 0 {
		var alts []alternative
		for _, verb := range r.verbs {
			p.verbs[verb] = true
			alts = append(alts, alternative{verb, 1})
			for _, k := range r.kinds {
				for _, s := range vocabulary.kindWords[k] {
					if s != verb {
						alts = append(alts, alternative{s, SynonymWeight})
						p.verbs[s] = true
					}
				}
			}
		}
		p.add(alts, 1)
	} else if len(r.kinds) > 0 {
		// A question form asks for its kind in other words: the kind's
		// own words match ("which topics do I have" finds ListTopics).
		var alts []alternative
		for _, k := range r.kinds {
			for _, s := range vocabulary.kindWords[k] {
				p.verbs[s] = true
				alts = append(alts, alternative{s, SynonymWeight})
			}
		}
		p.add(dedupe(alts), 1)
	}
	for _, n := range r.nouns {
		p.add([]alternative{{n, 1}}, 1)
	}
}

// showWords ask for a list when the thing after them is plural (show me
// the health checks) and for one thing otherwise (show me the config).
var showWords = map[string]bool{"show": true, "see": true, "display": true, "check": true, "view": true, "find": true, "look": true}

// addWord adds one word of the query and what it may mean.
func (p *plan) addWord(v *vocab, w queryWord, ix *Index, words []queryWord, i int) {
	alts := []alternative{{w.stem, 1}}
	for _, k := range v.kindOf[w.stem] {
		p.kinds[k] = true
		for _, s := range v.kindWords[k] {
			p.verbs[s] = true
			if s != w.stem {
				alts = append(alts, alternative{s, SynonymWeight})
			}
		}
	}
	for _, verb := range v.verbOf[w.stem] {
		p.verbs[verb] = true
		if verb != w.stem {
			alts = append(alts, alternative{verb, SynonymWeight})
		}
	}
	if len(v.kindOf[w.stem]) > 0 || len(v.verbOf[w.stem]) > 0 {
		p.verbs[w.stem] = true
	}
	for _, n := range v.nounOf[w.stem] {
		alts = append(alts, alternative{n, SynonymWeight})
	}
	if showWords[w.stem] {
		p.verbs[w.stem] = true
		if pluralAfter(words, i) {
			p.kinds[KindList] = true
		} else {
			p.kinds[KindGet] = true
		}
	}
	if _, ok := ix.postings[w.stem]; !ok && len(w.raw) >= minPrefix {
		alts = append(alts, ix.prefixes(w.raw)...)
	}
	p.add(dedupe(alts), w.weight)
}

// pluralAfter reports whether the first content word within three after
// position i is a plural noun.
func pluralAfter(words []queryWord, i int) bool {
	for j := i + 1; j < len(words) && j <= i+4; j++ {
		r := words[j].raw
		if stopwords[r] || r == "me" || r == "us" {
			continue
		}
		return len(r) > 3 && strings.HasSuffix(r, "s") && !strings.HasSuffix(r, "ss") && !strings.HasSuffix(r, "us") && !strings.HasSuffix(r, "is")
	}
	return false
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
