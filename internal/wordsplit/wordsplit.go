// Package wordsplit splits identifiers (getAnimal, HTTPRoute, snake_case,
// dotted.names) into lowercase words. It is the one splitter of the
// gateway: the describer, the search index and the query reader differ
// only in the rules they pass, so the word boundaries they agree on are
// found by the same code.
package wordsplit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Digits is what a rule does with digits.
type Digits uint8

const (
	// DigitsJoin keeps digits with the word they follow (v1beta2, ipv6),
	// so that version and protocol names are not cut; a capital after a
	// digit starts a word (V1Beta: v1, beta).
	DigitsJoin Digits = iota
	// DigitsApart makes each run of digits a word of its own (v1beta2:
	// v, 1, beta, 2).
	DigitsApart
	// DigitsDrop treats digits as separators.
	DigitsDrop
)

// Rules are a splitter's choices. Every rule splits at characters that
// are not letters (or digits, unless they are dropped) and at a change
// from lower to upper case (getAnimal: get, animal).
type Rules struct {
	Digits Digits
	// Acronyms ends a run of capitals before its last one when a
	// lower-case letter follows (HTTPRoute: http, route); without it the
	// run stays with what follows (httproute).
	Acronyms bool
	// ASCII counts only ASCII letters as letters; others separate words.
	ASCII bool
}

// Split returns the lowercase words of s under the rules r.
func Split(s string, r Rules) []string {
	var out []string
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(s[start:end]))
		}
		start = -1
	}
	for i, c := range s {
		letter := unicode.IsLetter(c) && (!r.ASCII || c < utf8.RuneSelf)
		digit := r.Digits != DigitsDrop && unicode.IsDigit(c)
		if !letter && !digit {
			flush(i)
			prev = 0
			continue
		}
		if start >= 0 && r.boundary(prev, c, s[i+utf8.RuneLen(c):]) {
			flush(i)
		}
		if start < 0 {
			start = i
		}
		prev = c
	}
	flush(len(s))
	return out
}

// boundary reports whether a word ends between prev and c; rest is what
// follows c, to split an acronym from the word after it.
func (r Rules) boundary(prev, c rune, rest string) bool {
	switch {
	case r.Digits == DigitsApart && unicode.IsDigit(prev) != unicode.IsDigit(c):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(c):
		return true
	case r.Digits == DigitsJoin && unicode.IsDigit(prev) && unicode.IsUpper(c):
		return true
	case r.Acronyms && unicode.IsUpper(prev) && unicode.IsUpper(c):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}
