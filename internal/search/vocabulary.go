package search

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The vocabulary (vocabulary.txt) is data: the words people use for what
// APIs do and what they act on, read once, when the first query needs it
// (a gateway whose catalog is small enough for typed tools never does:
// parsing it at start was half a megabyte of allocations, issue 40). See
// the file for its format and for the class of requests each entry
// serves.

//go:embed vocabulary.txt
var vocabularyText string

// Kinds a query can ask for: the standard methods (AIP-131 to 135).
const (
	KindList   = "list"
	KindGet    = "get"
	KindCreate = "create"
	KindUpdate = "update"
	KindDelete = "delete"
)

var kinds = []string{KindList, KindGet, KindCreate, KindUpdate, KindDelete}

// patternWord is one word of a phrase: a stem, a choice of stems
// ("do|does"), or '*' (up to maxGap of the query's own words).
type patternWord struct {
	stems []string
	gap   bool
}

const maxGap = 4

// rule is what a phrase means.
type rule struct {
	pattern []patternWord
	kinds   []string // standard kinds it asks for
	verbs   []string // stems of the verbs it stands for
	nouns   []string // terms of the nouns it names (a joined pair for two words)
	// ask: a question form, whose kind wins over the words inside it.
	ask  bool
	line int
}

// vocab is the parsed vocabulary.
type vocab struct {
	// rules are the multi-word phrases and question forms, longest
	// first; single words are in the maps below. byFirst lists, for each
	// stem a phrase can start with, its rules in that order.
	rules   []rule
	byFirst map[string][]int
	// kindOf maps a word's stem to the kinds it asks for; kindWords lists
	// each kind's single-word stems, its synonyms.
	kindOf    map[string][]string
	kindWords map[string][]string
	// verbOf maps a word's stem to the verbs it stands for.
	verbOf map[string][]string
	// nounOf maps a word's stem to the terms of the API nouns it means.
	nounOf map[string][]string
	// writeVerbs are the stems of the custom verbs that change things
	// (every verb line but readVerbs').
	writeVerbs map[string]bool
}

// vocabulary returns the parsed vocabulary.txt.
var vocabulary = sync.OnceValue(func() *vocab { return mustParseVocabulary(vocabularyText) })

func mustParseVocabulary(text string) *vocab {
	v, err := parseVocabulary(text)
	if err != nil {
		panic(err)
	}
	return v
}

// parseVocabulary reads the vocabulary's format (see vocabulary.txt).
func parseVocabulary(text string) (*vocab, error) {
	v := &vocab{kindOf: map[string][]string{}, kindWords: map[string][]string{}, verbOf: map[string][]string{}, nounOf: map[string][]string{}, writeVerbs: map[string]bool{}}
	for n, line := range strings.Split(text, "\n") {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, body, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("vocabulary.txt:%d: want \"kind|verb|noun|ask NAME: words\", got %q", n, line)
		}
		what, name, _ := strings.Cut(strings.TrimSpace(head), " ")
		name = strings.TrimSpace(name)
		if name == "" || strings.TrimSpace(body) == "" {
			return nil, fmt.Errorf("vocabulary.txt:%d: a name and words are needed: %q", n, line)
		}
		switch what {
		case "kind", "verb", "noun":
			if what == "kind" && !slices.Contains(kinds, name) {
				return nil, fmt.Errorf("vocabulary.txt:%d: kind %q is none of %v", n, name, kinds)
			}
			entries := strings.Split(body, ",")
			// A verb's words are all synonyms of each other (and of the
			// verb's name): each stands for every one of them that an
			// index can hold as a term.
			var members []string
			if what == "verb" {
				members = []string{Stem(name)}
				if !readVerbs[name] {
					v.writeVerbs[Stem(name)] = true
				}
				for _, w := range entries {
					if t := Terms(w); len(t) == 1 {
						members = appendNew(members, t[0])
					} else if len(t) == 2 {
						members = appendNew(members, t[0]+pairSep+t[1])
					}
				}
			}
			for _, w := range entries {
				words := Terms(w)
				if len(words) == 0 {
					return nil, fmt.Errorf("vocabulary.txt:%d: an empty entry in %q", n, line)
				}
				if w = strings.TrimSpace(w); stopwords[strings.ToLower(w)] && !strings.ContainsAny(w, " -") {
					return nil, fmt.Errorf("vocabulary.txt:%d: %q is a stopword: queries drop it, so alone it never matches (use it in a phrase)", n, w)
				}
				r := rule{line: n}
				switch what {
				case "kind":
					r.kinds = []string{name}
					r.verbs = kindStems(name, words)
				case "verb":
					r.verbs = members
				case "noun":
					r.nouns = []string{nounTerm(Terms(name))}
				}
				if len(words) == 1 {
					v.addWord(words[0], r)
					continue
				}
				for i, w := range words {
					// A phrasal verb's particle may come after its object:
					// "roll it back", "spin the server up".
					if i == len(words)-1 && what != "noun" && particles[w] {
						r.pattern = append(r.pattern, patternWord{gap: true})
					}
					r.pattern = append(r.pattern, patternWord{stems: []string{w}})
				}
				v.rules = append(v.rules, r)
			}
		case "ask":
			k, nouns, _ := strings.Cut(name, "+")
			k = strings.TrimSpace(k)
			if !slices.Contains(kinds, k) {
				return nil, fmt.Errorf("vocabulary.txt:%d: kind %q is none of %v", n, k, kinds)
			}
			r := rule{kinds: []string{k}, ask: true, line: n}
			for _, noun := range strings.Split(nouns, ",") {
				switch t := Terms(noun); {
				case len(t) == 0:
				case strings.TrimSpace(noun) == "count":
					r.verbs = append(r.verbs, "count")
				default:
					r.nouns = append(r.nouns, nounTerm(t))
				}
			}
			for _, p := range strings.Split(body, "|") {
				pr := r
				pr.pattern = nil
				for _, w := range strings.Fields(p) {
					if w == "*" {
						pr.pattern = append(pr.pattern, patternWord{gap: true})
						continue
					}
					var pw patternWord
					// A query's "what's" is read as "what" (splitQuery):
					// so is a pattern's.
					w = strings.TrimSuffix(w, "'s")
					for _, alt := range strings.Split(w, "/") {
						if t := Terms(alt); len(t) == 1 {
							pw.stems = append(pw.stems, t[0])
						} else {
							return nil, fmt.Errorf("vocabulary.txt:%d: %q is not one word", n, alt)
						}
					}
					pr.pattern = append(pr.pattern, pw)
				}
				if len(pr.pattern) == 0 || pr.pattern[0].gap || pr.pattern[len(pr.pattern)-1].gap {
					return nil, fmt.Errorf("vocabulary.txt:%d: %q: a phrase starts and ends with a word", n, p)
				}
				v.rules = append(v.rules, pr)
			}
		default:
			return nil, fmt.Errorf("vocabulary.txt:%d: %q is none of kind, verb, noun, ask", n, what)
		}
	}
	v.rules = mergeRules(v.rules)
	// Longest phrases first, so "get rid of" wins over "get".
	slices.SortStableFunc(v.rules, func(a, b rule) int { return len(b.pattern) - len(a.pattern) })
	v.byFirst = make(map[string][]int)
	for i, r := range v.rules {
		for _, s := range r.pattern[0].stems {
			v.byFirst[s] = append(v.byFirst[s], i)
		}
	}
	return v, nil
}

// mergeRules joins the rules of one phrase: a phrase may mean several
// things ("turn off" is an update, a stop and a disable), and a query
// that says it means all of them.
func mergeRules(rules []rule) []rule {
	var out []rule
	at := map[string]int{}
	for _, r := range rules {
		k := patternKey(r.pattern)
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, r)
			continue
		}
		m := &out[i]
		for _, x := range r.kinds {
			m.kinds = appendNew(m.kinds, x)
		}
		for _, x := range r.verbs {
			m.verbs = appendNew(m.verbs, x)
		}
		for _, x := range r.nouns {
			m.nouns = appendNew(m.nouns, x)
		}
		m.ask = m.ask || r.ask
	}
	return out
}

// patternKey writes a pattern as text: "turn * off".
func patternKey(p []patternWord) string {
	var words []string
	for _, pw := range p {
		if pw.gap {
			words = append(words, "*")
		} else {
			words = append(words, strings.Join(pw.stems, "/"))
		}
	}
	return strings.Join(words, " ")
}

// kindStems are the verb stems a kind's entry stands for: its own
// single words (a phrase stands for the kind's name).
func kindStems(kind string, words []string) []string {
	if len(words) == 1 {
		return []string{words[0]}
	}
	return []string{Stem(kind)}
}

// nounTerm is the index term of an API noun: the word itself, or for a
// phrase the pair of its last two words joined (iam policy: "iam_polic"),
// which the index holds for adjacent words of names.
func nounTerm(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return words[len(words)-2] + pairSep + words[len(words)-1]
}

// readVerbs are the verb lines that change nothing.
var readVerbs = map[string]bool{"search": true, "predict": true, "explain": true, "validate": true, "generate": true, "export": true}

// particles end phrasal verbs (spin up, roll back, shut down), which
// people split around the object.
var particles = map[string]bool{"up": true, "down": true, "back": true, "off": true, "on": true, "over": true, "out": true, "in": true, "away": true}

// pairSep joins the two stems of a pair term.
const pairSep = "_"

func (v *vocab) addWord(stem string, r rule) {
	for _, k := range r.kinds {
		v.kindOf[stem] = appendNew(v.kindOf[stem], k)
		v.kindWords[k] = appendNew(v.kindWords[k], stem)
	}
	for _, verb := range r.verbs {
		v.verbOf[stem] = appendNew(v.verbOf[stem], verb)
	}
	for _, noun := range r.nouns {
		if noun != stem {
			v.nounOf[stem] = appendNew(v.nounOf[stem], noun)
		}
	}
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// knows reports whether a hyphenated or dotted word is the vocabulary's:
// its parts are a phrase of it (fine-tune), or joined one of its words.
func (v *vocab) knows(w string) bool {
	var stems []string
	for _, t := range Tokens(w) {
		stems = append(stems, Stem(t))
	}
	if len(stems) < 2 {
		return false
	}
	joined := Stem(strings.Join(Tokens(w), ""))
	if len(v.kindOf[joined]) > 0 || len(v.verbOf[joined]) > 0 || len(v.nounOf[joined]) > 0 {
		return true
	}
	for i := range v.rules {
		if len(v.rules[i].pattern) == len(stems) {
			if pos, ok := v.rules[i].match(stems, 0); ok && len(pos) == len(stems) {
				return true
			}
		}
	}
	return false
}

// match reports whether r's pattern matches words from position i, and
// which positions its own words took (a gap's words stay the query's).
func (r *rule) match(words []string, i int) (used []int, ok bool) {
	var try func(p, at int) bool
	try = func(p, at int) bool {
		if p == len(r.pattern) {
			return true
		}
		pw := r.pattern[p]
		if pw.gap {
			for skip := 0; skip <= maxGap && at+skip <= len(words); skip++ {
				if try(p+1, at+skip) {
					return true
				}
			}
			return false
		}
		if at >= len(words) || !slices.Contains(pw.stems, words[at]) {
			return false
		}
		used = append(used, at)
		if try(p+1, at+1) {
			return true
		}
		used = used[:len(used)-1]
		return false
	}
	if try(0, i) {
		return used, true
	}
	return nil, false
}
