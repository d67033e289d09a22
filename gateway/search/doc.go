// Package search ranks a fixed set of documents against short queries
// written the way people ask for things ("delete a topic", "list the
// buckets of a project"). The gateway's search mode feeds it one document
// per tool; this package knows nothing of tools, gRPC or MCP.
//
// It is lexical and self-contained on purpose: no external service and no
// model, so it runs wherever the gateway runs, answers within a
// millisecond on a catalog of 1,450 tools (BenchmarkSearchTools in
// estate/), and ranks the same way every time.
//
// The pieces, each in its own file:
//   - tokenize.go splits identifiers and prose into terms: at case changes
//     (GetHTTPRoute: get, http, route), underscores, digits, dots, slashes
//     and punctuation; lowercases; and stems lightly (plural and verb
//     endings), so "instances", "instance" and "Instance" meet.
//   - synonyms.go holds the verb groups a query is widened with
//     (create/insert/add/new, delete/remove, ...).
//   - index.go builds the index once (BM25F: each document is a list of
//     weighted fields, and a term's frequency is the weighted sum of its
//     length-normalised frequencies in the fields) and answers queries.
package search
