package search

// verbGroups are the words people and APIs use for the same action. A
// query term in a group also matches the group's other terms (at
// SynonymWeight), so "add a subscription" finds CreateSubscription and
// "remove the topic" finds DeleteTopic. Only verbs are grouped: nouns are
// the API's own vocabulary, and guessing at it would mislead more often
// than help.
var verbGroups = [][]string{
	{"create", "insert", "add", "new", "make"},
	{"delete", "remove", "erase", "destroy", "drop"},
	{"list", "enumerate", "show", "browse"},
	{"get", "fetch", "read", "describe", "retrieve", "lookup", "view"},
	{"update", "patch", "modify", "set", "change", "edit"},
	{"start", "run", "launch", "begin"},
	{"stop", "halt", "terminate"},
	{"restart", "reboot", "reset"},
	{"search", "find", "query"},
}

// SynonymWeight scales a synonym's match relative to the word the query
// used, so a tool named with the user's own verb ranks first.
const SynonymWeight = 0.8

// synonyms maps a stemmed term to the stems of its group's other terms.
var synonyms = func() map[string][]string {
	m := make(map[string][]string)
	for _, g := range verbGroups {
		stems := make([]string, len(g))
		for i, w := range g {
			stems[i] = Stem(w)
		}
		for i, s := range stems {
			for j, o := range stems {
				if i != j {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	return m
}()

// stopwords are dropped from queries: words that say how a person asks,
// not what for. Documents keep them (they rarely appear in identifiers,
// and BM25's idf already discounts them in prose).
var stopwords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range []string{
		"a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "with", "from", "into", "and", "or",
		"all", "any", "some", "every", "each", "my", "our", "your", "their", "its", "this", "that", "these", "those",
		"i", "we", "you", "me", "us", "it", "is", "are", "be", "was", "been", "do", "does", "can", "could",
		"would", "should", "will", "want", "need", "like", "please", "how", "what", "which", "who", "where",
		"when", "there", "about", "give", "tell", "let", "using", "via", "one", "ones", "currently",
		"details", "info", "information",
	} {
		m[w] = true
	}
	return m
}()
