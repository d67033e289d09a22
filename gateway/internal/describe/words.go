package describe

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/internal/wordsplit"
)

// splitWords splits an identifier into lowercase words: at underscores and
// other separators, at a change from lower to upper case (getAnimal), and
// before the last capital of a run followed by a lower-case letter
// (HTTPRoute: http, route). Digits stay with the word they follow (v1,
// ipv6), so version and protocol names are not cut.
func splitWords(s string) []string {
	return wordsplit.Split(s, wordsplit.Rules{Digits: wordsplit.DigitsJoin, Acronyms: true})
}

// acronyms are words written in capitals when a sentence shows them.
var acronyms = map[string]bool{
	"acl": true, "api": true, "apis": true, "bgp": true, "cpu": true, "csv": true, "ddl": true, "dns": true,
	"gpu": true, "http": true, "https": true, "iam": true, "id": true, "ids": true, "ip": true, "json": true,
	"kms": true, "llm": true, "ml": true, "mtls": true, "nat": true, "os": true, "rag": true, "sql": true,
	"ssh": true, "ssl": true, "tls": true, "tpu": true, "uri": true, "url": true, "vm": true, "vpc": true,
	"vpn": true, "ssd": true, "sku": true, "oauth": true, "saml": true, "scim": true, "mfa": true, "crd": true,
}

// phrase joins words for a sentence, writing acronyms in capitals
// (IDs for "ids").
func phrase(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		switch {
		case w == "ids":
			out[i] = "IDs"
		case acronyms[w]:
			out[i] = strings.ToUpper(w)
		default:
			out[i] = w
		}
	}
	return strings.Join(out, " ")
}

// singular returns the singular of an English noun as APIs use them
// (instances, policies, addresses, indexes, statuses, data).
func singular(w string) string {
	switch {
	case len(w) <= 3 || !strings.HasSuffix(w, "s"):
		return w
	case irregularSingular[w] != "":
		return irregularSingular[w]
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"),
		strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "zzes"), strings.HasSuffix(w, "uses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	}
	return w[:len(w)-1]
}

var irregularSingular = map[string]string{
	"indices": "index", "caches": "cache", "niches": "niche", "avalanches": "avalanche", "aliases": "alias", "statuses": "status", "analyses": "analysis",
	"people": "person", "children": "child", "series": "series", "species": "species", "news": "news",
}

// plural returns the plural of a singular English noun.
func plural(w string) string {
	switch {
	case w == "":
		return w
	case w == "data" || w == "metadata" || w == "series" || w == "species" || w == "info" || w == "information" || w == "news":
		return w
	case w == "person":
		return "people"
	case w == "child":
		return "children"
	}
	return withS(w)
}

// isPlural reports whether w reads as a plural noun.
func isPlural(w string) bool {
	return w != singular(w) || w == "data" || w == "metadata" || w == "people"
}

// thirdPerson conjugates a verb for "it": stops, searches, applies, does.
func thirdPerson(v string) string {
	switch {
	case v == "":
		return v
	case v == "do" || v == "go" || v == "undo" || v == "redo":
		return v + "es"
	case v == "be":
		return "is"
	case v == "have":
		return "has"
	}
	return withS(v)
}

// withS adds English's regular -s to a noun or a verb: stops, searches,
// applies.
func withS(w string) string {
	switch {
	case strings.HasSuffix(w, "y") && len(w) > 1 && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "ch"),
		strings.HasSuffix(w, "sh"), strings.HasSuffix(w, "z"):
		return w + "es"
	}
	return w + "s"
}

// article is "a" or "an" for the phrase that follows it, by its sound
// as far as spelling tells: an instance, an IAM policy, a user, an hour.
func article(p string) string {
	w, _, _ := strings.Cut(p, " ")
	if w == "" {
		return "a"
	}
	if w == strings.ToUpper(w) && len(w) > 1 { // an acronym, read letter by letter
		if strings.ContainsRune("AEFHILMNORSX", rune(w[0])) {
			return "an"
		}
		return "a"
	}
	lw := strings.ToLower(w)
	for _, p := range []string{"uni", "use", "usa", "usu", "uti", "eu", "one", "once"} {
		if strings.HasPrefix(lw, p) {
			return "a"
		}
	}
	for _, p := range []string{"hour", "honest", "honor", "honour"} {
		if strings.HasPrefix(lw, p) {
			return "an"
		}
	}
	if strings.ContainsRune("aeiou", rune(lw[0])) {
		return "an"
	}
	return "a"
}

// upperFirst capitalizes the first letter of s.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
