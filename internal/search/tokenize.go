package search

import (
	"strings"

	"github.com/grpc-mcp-gateway/gateway/internal/wordsplit"
)

// Tokens splits s into lowercase words: at every character that is not a
// letter or digit, at a change from lower to upper case (getAnimal), before
// the last capital of a run followed by a lower-case letter (HTTPRoute:
// http, route) and between letters and digits (v1beta2: v, 1, beta, 2). It
// does not stem; Terms does.
func Tokens(s string) []string {
	return wordsplit.Split(s, wordsplit.Rules{Digits: wordsplit.DigitsApart, Acronyms: true})
}

// Terms is what the index stores and queries look up: the tokens of s,
// stemmed, in order, duplicates kept (they count as frequency).
func Terms(s string) []string {
	toks := Tokens(s)
	for i, t := range toks {
		toks[i] = Stem(t)
	}
	return toks
}

// Stem reduces a lowercase word to a stem shared with its plural, verb
// and -ion forms: "instances" and "instance" give "instanc"; "deleting",
// "deleted", "deletes", "deletion" and "delete" give "delet"; "policies"
// and "policy" give "polic"; "predictions" and "predict" give "predict".
// Three letters ending in s after a consonant are a two-letter
// abbreviation's plural (vms, ips, dbs). It is deliberately light (plural -s, -es, -ies; then -ing, -ed or -ion;
// then a final -e or -y), because identifiers are short and a heavier
// stemmer merges unrelated names. Short words are left alone.
func Stem(w string) string {
	if len(w) == 3 && w[2] == 's' && isASCIIWord(w) && !strings.ContainsRune("aeiouys", rune(w[1])) {
		// The plural of a two-letter abbreviation: vms, ips, dbs.
		return w[:2]
	}
	if len(w) <= 3 || !isASCIIWord(w) {
		return w
	}
	if s, ok := stemExceptions[w]; ok {
		return s
	}
	// Plurals.
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		// address, status, analysis: not plurals.
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	// Verb and action-noun endings, leaving at least three letters.
	switch {
	case strings.HasSuffix(w, "ing") && len(w) >= 6 && strings.ContainsAny(w[:len(w)-3], "aeiouy"):
		// (string keeps its ing: str has no vowel)
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) >= 6:
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ion") && len(w) >= 7:
		w = w[:len(w)-3]
	}
	// A final e or y is dropped so that "create"/"creat(ed)",
	// "tune"/"tun(ing)" and "policy"/"polic(ies)" meet.
	if len(w) >= 4 && (strings.HasSuffix(w, "e") || strings.HasSuffix(w, "y")) {
		w = w[:len(w)-1]
	}
	return w
}

// stemExceptions are words whose light stem would be another word: the
// settings of a thing are not the verb set.
var stemExceptions = map[string]string{"setting": "setting", "settings": "setting"}

// undouble turns "runn" (from running) into "run", but keeps the doubled
// l, s and z that belong to the word (install, pass, buzz).
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIIWord(w string) bool {
	for i := range len(w) {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
