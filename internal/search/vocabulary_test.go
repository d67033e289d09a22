package search

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestVocabularyEntries: every entry of vocabulary.txt says something:
// no user noun maps only to itself, no line lists one phrase twice (two
// forms of one word stem the same), and every kind has words. A phrase on
// several lines means all they say (turn off: an update, a stop, a
// disable).
func TestVocabularyEntries(t *testing.T) {
	for stem, nouns := range vocabulary().nounOf {
		if len(nouns) == 0 || slices.Equal(nouns, []string{stem}) {
			t.Errorf("noun entry %q maps only to itself", stem)
		}
	}
	for n, line := range strings.Split(vocabularyText, "\n") {
		head, body, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		sep := ","
		if strings.HasPrefix(head, "ask ") {
			sep = "|"
		}
		seen := map[string]bool{}
		for _, e := range strings.Split(body, sep) {
			k := strings.Join(Terms(strings.TrimSuffix(strings.TrimSpace(e), "'s")), " ")
			if seen[k] {
				t.Errorf("vocabulary.txt:%d lists %q twice", n+1, k)
			}
			seen[k] = true
		}
	}
	keys := map[string]bool{}
	for _, r := range vocabulary().rules {
		if k := patternKey(r.pattern); keys[k] {
			t.Errorf("the phrase %q is two rules", k)
		} else {
			keys[k] = true
		}
	}
	for _, k := range kinds {
		if len(vocabulary().kindWords[k]) == 0 {
			t.Errorf("kind %s has no words", k)
		}
	}
}

func TestVocabularyErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"kind list", `vocabulary.txt:1: want "kind|verb|noun|ask NAME: words"`},
		{"kind: a", "vocabulary.txt:1: a name and words are needed"},
		{"kind browse: list", `kind "browse" is none of`},
		{"ask list: * do", `a phrase starts and ends with a word`},
		{"ask frob: which", `kind "frob" is none of`},
		{"thing x: y", `"thing" is none of kind, verb, noun, ask`},
		{"noun disk: drive, , b", "an empty entry"},
		{"verb set: assign, give", `"give" is a stopword`},
	} {
		if _, err := parseVocabulary(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// indexOf is an index holding the given terms, so a query's reading can
// see which words the catalog knows.
func indexOf(texts ...string) *Index {
	var docs []Document
	for _, s := range texts {
		docs = append(docs, Document{Key: s, Fields: []Field{{Text: s, Weight: 1, Pairs: true}}})
	}
	return New(docs)
}

// TestQueryReading: each class of request is read as it means. Every row
// is a class the vocabulary or the reader serves; the words are not from
// any relevance set.
func TestQueryReading(t *testing.T) {
	ix := indexOf("ListInstances GetInstance DeleteInstance CreateInstance", "GetConfig", "GetIamPolicy SetIamPolicy", "ListTopics", "StartInstance",
		"ResetWorkflow", "CreateSnapshot", "RenameFolder", "ListWidgets")
	for _, tc := range []struct {
		class, query string
		kinds        []string
		verbs        []string // some of the verbs asked
		primary      string   // a term of the request's object, "" for none
		lowWeight    []string // words read but weighed down
		absent       []string // words set aside
		full         []string // terms read at full weight
	}{
		{"question form: which ... do I have", "which servers do I have in eu-west-3", []string{KindList}, []string{"list"}, "instanc", []string{"west"}, []string{"eu"}, nil},
		{"question form: is there any", "is there any widget left", []string{KindList}, nil, "widget", nil, nil, nil},
		{"show + plural is a list", "show me the widgets", []string{KindList}, []string{"show"}, "widget", nil, nil, nil},
		{"show + singular is a get", "show me the config of widget-7", []string{KindGet}, []string{"show"}, "config", nil, nil, nil},
		{"status question", "what's the status of the box", []string{KindGet}, nil, "instanc", nil, nil, nil},
		{"idiom: get rid of", "get rid of the old box", []string{KindDelete}, []string{"delet", "remov"}, "instanc", nil, nil, nil},
		{"idiom: nuke", "nuke that vm", []string{KindDelete}, []string{"delet"}, "instanc", nil, nil, nil},
		{"phrasal verb split: spin X up", "spin a new server up", []string{KindCreate}, []string{"creat"}, "instanc", nil, nil, nil},
		{"phrasal verb: roll back", "roll the workflow back to yesterday", nil, []string{"reset", "rewind"}, "workflow", nil, nil, nil},
		{"verb idiom: switch off", "switch off the machine", nil, []string{"stop"}, "instanc", nil, nil, nil},
		{"take a copy is a create", "take a snapshot of my volume", []string{KindCreate}, nil, "snapshot", nil, nil, nil},
		{"access questions name the policy", "who has access to the topic", []string{KindGet}, nil, "iam_polic", nil, nil, nil},
		{"grants name the policy", "give bob access to the topic", []string{KindUpdate}, nil, "iam_polic", nil, nil, nil},
		{"values are set aside", "start vm-17 in us-east1-b at 10.0.0.1", nil, []string{"start"}, "", nil, []string{"east", "us"}, nil},
		{"called names are set aside", "create a topic called orders", []string{KindCreate}, nil, "topic", nil, []string{"order"}, nil},
		{"quoted text and JSON are set aside", `publish {"status": "deleted"} to "the list"`, nil, []string{"publish"}, "", nil, []string{"delet", "list", "status"}, nil},
		{"typographic quotes are quotes", "create a topic “orders” for the server’s logs", []string{KindCreate}, nil, "topic", nil, []string{"order"}, nil},
		{"a quote never closed quotes nothing", `delete the "old widgets`, []string{KindDelete}, nil, "widget", nil, nil, []string{"widget"}},
		{"a brace never closed is punctuation", "list the {widgets", []string{KindList}, nil, "widget", nil, nil, []string{"widget"}},
		{"asides weigh less, and ask for nothing", "rename the folder so nobody deletes it", nil, []string{"renam"}, "folder", []string{"delet"}, nil, nil},
		{"relative clauses weigh less", "list the widgets that failed", []string{KindList}, nil, "widget", []string{"fail"}, nil, nil},
		{"that as a determiner", "nuke that vm", []string{KindDelete}, nil, "instanc", nil, nil, nil},
		{"a leading aside weighs less", "before we deploy, take a snapshot", []string{KindCreate}, nil, "snapshot", []string{"deplo"}, nil, nil},
		{"names in CamelCase weigh less, and ask for nothing", "start the OnboardCustomer workflow", nil, []string{"start"}, "workflow", []string{"customer"}, nil, nil},
		{"plural abbreviations", "list vms", []string{KindList}, nil, "instanc", nil, nil, nil},
		{"a hyphenated phrase of the vocabulary is words, not a name", "fine-tune a model", nil, nil, "", nil, nil, []string{"tun_job"}},
	} {
		p := vocabulary().read(tc.query, ix)
		if got := slices.Sorted(maps.Keys(p.kinds)); !slices.Equal(got, slices.Sorted(slices.Values(tc.kinds))) {
			t.Errorf("%s: %q: kinds %v, want %v", tc.class, tc.query, got, tc.kinds)
		}
		for _, v := range tc.verbs {
			if !p.verbs[v] {
				t.Errorf("%s: %q: does not ask for %q (verbs %v)", tc.class, tc.query, v, slices.Sorted(maps.Keys(p.verbs)))
			}
		}
		if tc.primary != "" && !p.primary[tc.primary] {
			t.Errorf("%s: %q: the object is %v, want it to hold %q", tc.class, tc.query, slices.Sorted(maps.Keys(p.primary)), tc.primary)
		}
		weight := map[string]float64{}
		for g, alts := range p.groups {
			for _, a := range alts {
				weight[a.term] = max(weight[a.term], p.weights[g])
			}
		}
		for _, w := range tc.lowWeight {
			if weight[w] == 0 || weight[w] >= 1 {
				t.Errorf("%s: %q: %q weighs %v, want it read at a low weight", tc.class, tc.query, w, weight[w])
			}
		}
		for _, w := range tc.absent {
			if _, ok := weight[w]; ok {
				t.Errorf("%s: %q: %q was read; want it set aside", tc.class, tc.query, w)
			}
		}
		for _, w := range tc.full {
			if weight[w] < 1 {
				t.Errorf("%s: %q: %q weighs %v, want it read at full weight", tc.class, tc.query, w, weight[w])
			}
		}
	}
}
