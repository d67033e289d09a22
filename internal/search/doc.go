// Package search ranks a fixed set of documents against requests written
// the way people ask an agent ("get rid of the old test box", "which
// topics do I have"). The gateway's search mode feeds it one document per
// tool, with what the tool's structure says (its kind of method, verb,
// target, API); this package knows nothing of tools, gRPC or MCP.
//
// The lexical ranking is self-contained on purpose: no external service
// and no model, so it runs wherever the gateway runs, answers within a
// millisecond on a catalog of 1,450 tools (BenchmarkSearchLatency in
// estate/), and ranks the same way every time. An embedding model's
// ranking can be fused with it (dense.go; the client is the embeddings
// subpackage).
//
// The pieces, each in its own file:
//   - tokenize.go splits identifiers and prose into terms: at case changes
//     (GetHTTPRoute: get, http, route), underscores, digits, dots, slashes
//     and punctuation; lowercases; and stems lightly (plural and verb
//     endings), so "instances", "instance" and "Instance" meet.
//   - vocabulary.txt is the language people use with APIs (the kinds of
//     method a word asks for, verb idioms, users' nouns, question forms),
//     as data; vocabulary.go reads it.
//   - query.go reads a request: values set aside, asides weighed down,
//     the vocabulary's phrases found, the request's object found, every
//     word a group of the terms it may match.
//   - index.go builds the index once (BM25F: each document is a list of
//     weighted fields, and a term's frequency is the weighted sum of its
//     length-normalised frequencies in the fields) and answers queries,
//     times the structure factors.
//   - loose.go answers a query whose words match no document the normal
//     way (SearchLoose, LooseWithin).
//   - dense.go holds embeddings and fuses rankings.
//   - stopwords.go lists the words that say how a person asks, not what
//     for.
//
// A search need never answer empty while there are documents to answer
// with: SearchLoose answers as SearchWithin does, at the same cost, when
// the query matches; when it matches nothing (its words are all values,
// or no document has them), it answers loose matches and reports them as
// such. Their evidence is weaker: the query's every word, its values'
// too, matched as itself, a prefix or a shared stem; the terms of what a
// yes-or-no question asks (check, status, exist); and the kind and verb
// it asks for, which at last rank every document kept, the best of each
// group first. The caller tells its user the match is loose (the
// gateway's answer carries a note).
package search
