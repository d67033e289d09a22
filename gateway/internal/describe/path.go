package describe

import "strings"

// shape is what a URL path template says about a method: the resource it
// names, the resources that enclose it, and what follows.
//
// It reads the templates of google.api.http rules and of AIP-123 resource
// patterns alike ("/compute/v1/projects/{project}/zones/{zone}/instances/
// {instance}/stop", "/v1/{name=projects/*/locations/*/datasets/*}:import",
// "projects/{project}/buckets/{bucket}/managedFolders/{managed_folder=**}"):
// a literal followed by a variable is a collection and one of its members;
// a literal at the end, with no variable after it, is a whole collection
// (a list or create) or, when it reads as a verb, a custom method.
type shape struct {
	// resource is the singular words of the collection the path ends in
	// or names a member of; nil when the path has no collection.
	resource []string
	// one: the path names one member of resource, not the collection.
	one bool
	// parents are the singular words of the enclosing collections'
	// members, nearest first: zone, project.
	parents [][]string
	// tail is the words after the resource that are not a collection:
	// a custom verb and its object (":setIamPolicy", "/serialPort").
	tail []string
	// aggregated: the path lists across every scope
	// (Compute's /aggregated/).
	aggregated bool
}

type segment struct {
	lit string // a literal, "" for a variable
}

// parseTemplate turns a path template into literals and variables, a
// variable's pattern expanded into its own literals and wildcards.
func parseTemplate(t string) (segs []segment, verb string) {
	// A custom verb follows the last ':' outside braces.
	depth := 0
	for i := len(t) - 1; i >= 0; i-- {
		switch t[i] {
		case '}':
			depth++
		case '{':
			depth--
		case ':':
			if depth == 0 {
				t, verb = t[:i], t[i+1:]
				i = -1
			}
		}
	}
	for len(t) > 0 {
		t = strings.TrimLeft(t, "/")
		if t == "" {
			break
		}
		if t[0] == '{' {
			end := strings.IndexByte(t, '}')
			if end < 0 {
				return segs, verb
			}
			v := t[1:end]
			t = t[end+1:]
			_, pattern, ok := strings.Cut(v, "=")
			if !ok {
				segs = append(segs, segment{})
				continue
			}
			inner, _ := parseTemplate(pattern)
			segs = append(segs, inner...)
			continue
		}
		end := strings.IndexAny(t, "/{")
		if end < 0 {
			end = len(t)
		}
		lit := t[:end]
		t = t[end:]
		if lit == "*" || lit == "**" {
			segs = append(segs, segment{})
		} else {
			segs = append(segs, segment{lit: lit})
		}
	}
	return segs, verb
}

// versionLike reports whether a path literal is an API version (v1,
// v2beta1) rather than a collection.
func versionLike(s string) bool {
	if len(s) < 2 || s[0] != 'v' || s[1] < '0' || s[1] > '9' {
		return false
	}
	return true
}

// parseShape reads a path template.
func parseShape(t string) shape {
	segs, verb := parseTemplate(t)
	var sh shape
	// Collections with a member named: a literal followed by a variable.
	type coll struct {
		words []string
		one   bool
	}
	var colls []coll
	var trailing []string
	for i := 0; i < len(segs); i++ {
		s := segs[i]
		if s.lit == "" {
			continue
		}
		if i+1 < len(segs) && segs[i+1].lit == "" {
			w := splitWords(s.lit)
			if len(w) == 0 {
				i++ // "-/{x}": no collection name
				continue
			}
			colls = append(colls, coll{words: singularWords(w), one: true})
			trailing = nil
			i++
			continue
		}
		switch {
		case s.lit == "aggregated":
			sh.aggregated = true
		case s.lit == "global" || versionLike(s.lit):
		default:
			trailing = append(trailing, s.lit)
		}
	}
	// The last trailing literal that reads as a plural noun (and not as
	// a verb) is a collection named whole: .../zones/{zone}/instances,
	// /locations/global/firewallPolicies. Literals before the last member
	// (compute, v1, cluster) were dropped with trailing above; what
	// follows the collection is a custom verb (bulkInsert).
	for i := len(trailing) - 1; i >= 0; i-- {
		w := splitWords(trailing[i])
		if len(w) == 0 {
			continue // a literal of no letters ("-", "~")
		}
		if _, isVerb := verbEffects[w[0]]; isVerb || !isPlural(w[len(w)-1]) {
			continue
		}
		colls = append(colls, coll{words: singularWords(w), one: false})
		trailing = trailing[i+1:]
		break
	}
	sh.tail = append(sh.tail, wordsOf(trailing)...)
	if verb != "" {
		sh.tail = append(sh.tail, splitWords(verb)...)
	}
	if len(colls) == 0 {
		return sh
	}
	last := colls[len(colls)-1]
	sh.resource, sh.one = last.words, last.one
	for i := len(colls) - 2; i >= 0; i-- {
		sh.parents = append(sh.parents, colls[i].words)
	}
	return sh
}

func wordsOf(lits []string) []string {
	var out []string
	for _, l := range lits {
		out = append(out, splitWords(l)...)
	}
	return out
}

// singularWords makes the last word of a noun phrase singular:
// entity types -> entity type.
func singularWords(w []string) []string {
	if len(w) == 0 {
		return w
	}
	out := append([]string(nil), w...)
	out[len(out)-1] = singular(out[len(out)-1])
	return out
}
