// Package claims keeps the table of docs/testing.md that names, for each
// claim the README and docs/ make, the tests that hold it. The claims
// live in docs/claims.tsv; TestClaimTable checks that every test named
// there exists and that docs/testing.md shows the table generated from
// the file, so the two cannot drift. `make generate` (or `go generate
// ./internal/claims`) rewrites the table.
package claims

//go:generate go test -run ^TestClaimTable$ -count=1 -update
