package compiled

import (
	"encoding/json"
	"strconv"

	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// claudeInlineChars is the size over which Claude Code moves a result out
// of the context unless the tool declares anthropic/maxResultSizeChars;
// resultNoteBytes bounds what the gateway adds to a result's JSON (the
// sentence about a cut or the next page).
const (
	claudeInlineChars = 50000
	resultNoteBytes   = 4096
)

// Budget is what a tool's results need from its budget, decided at
// discovery.
type Budget struct {
	// shape is what a cut needs of the tool's output schema: where its
	// records go, whether a root member of that name already holds the
	// gateway's records (a stream stopped at a limit; see
	// schema.WithTruncated), and the members the schema requires.
	Shape results.Shape
	// askLess ends the sentence of a cut with the ways this method offers
	// to ask for less (gateway/internal/paging), "" when it has none.
	AskLess string
}

// compileBudget marks t's output schema to admit the list of cuts
// (toolOutput adds it) and, when
// the budget lets a result grow past what Claude Code keeps inline,
// declares the largest result in the tool's _meta
// (anthropic/maxResultSizeChars), so such a client keeps it in context.
// With the default budget the declaration would change nothing, so it is
// left out and tools/list stays small.
func compileBudget(t *Tool, budget int) {
	if budget <= 0 {
		return
	}
	// The shape of a tool with an output schema is completed from the
	// schema's root (rootFacts): the member may need another name.
	t.Budget.Shape = results.Shape{Member: schema.TruncatedProperty, Merge: true}
	if t.Call.Kind == KindServerStream || t.Call.Kind == KindBidiStream {
		// schema.StreamOutput declares the records' member already.
		t.Budget.Shape.Required = []string{schema.StreamMessagesProperty}
	}
	if budget+resultNoteBytes > claudeInlineChars {
		t.Definition.Meta = json.RawMessage(`{"anthropic/maxResultSizeChars":` + strconv.Itoa(budget+resultNoteBytes) + `}`)
	}
}
