package search

// SynonymWeight scales a match through the vocabulary (a synonym, an
// idiom's verb, the API noun a user's word means) relative to the word
// the query used, so a tool named with the user's own word ranks first.
const SynonymWeight = 0.8

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
		"details", "info", "information", "just", "please", "thanks", "thank", "now", "right", "anymore",
		"so", "because", "since", "before", "after", "then", "them", "they", "he", "she", "his", "her", "him",
		"if", "not", "no", "yes", "up", "out", "over", "back", "off", "down", "too", "also", "again", "only",
		"am", "has", "have", "had", "being", "were", "here", "as", "but", "than", "very", "really", "quick",
		"quickly", "currently", "already", "still", "yet", "ever", "go", "going", "gonna", "wanna", "let's",
		"lets", "hey", "hi", "ok", "okay", "mine", "ours", "yours", "whether", "why", "something", "thing",
		"things", "stuff", "bit", "lot", "bunch", "able", "sure", "might", "may", "must", "shall", "don't",
		"doesn't", "isn't", "aren't", "won't", "can't", "we're", "i'm", "it's", "what's", "that's", "there's",
		"we've", "i've", "we'd", "i'd", "you're", "s", "t", "d", "ll", "re", "ve", "m", "don", "doesn", "isn",
		"aren", "won", "didn", "wasn", "hasn", "haven", "couldn", "wouldn", "shouldn",
	} {
		m[w] = true
	}
	return m
}()
