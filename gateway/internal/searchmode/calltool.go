package searchmode

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// call_tool, search mode's second tool: its arguments, and the answer to a
// name the catalog lacks. Which tool the name resolves to, and running it
// as a tools/call of its own, are the gateway's.

// callToolArgs are call_tool's arguments.
type callToolArgs struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallArgs reads call_tool's arguments raw: the name of the tool to run
// and its arguments. Arguments call_tool's input schema does not allow
// are answered by bad, a tool execution error as a typed tool's invalid
// arguments are; name and args are then unset.
func CallArgs(raw json.RawMessage) (name string, args json.RawMessage, bad *mcp.CallToolResult) {
	var a callToolArgs
	if err := decodeMetaArgs(raw, &a); err != nil {
		return "", nil, metaInputError(CallToolName, err)
	}
	if a.Name == nil || *a.Name == "" {
		return "", nil, metaInputError(CallToolName, errors.New("name: required, the exact name of a tool found with "+SearchToolsName))
	}
	return *a.Name, a.Arguments, nil
}

// maxSuggestions is how many close names an unknown name is answered with.
const maxSuggestions = 3

// UnknownTool answers call_tool with a name the catalog does not have
// (never had, was hidden or excluded, or went away in a refresh): a tool
// execution error naming the closest tools, so the model corrects itself
// without another search; keep, when set, is the caller's view (a tool
// it may not see is never suggested).
func (sc *Catalog) UnknownTool(name string, keep func(int) bool) *mcp.CallToolResult {
	var b strings.Builder
	b.WriteString("unknown tool ")
	b.WriteString(quote(name))
	hits := sc.index.SearchWithin(name, maxSuggestions, keep)
	for i, h := range hits {
		if i == 0 {
			b.WriteString("; the closest names are ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(sc.tools[h.Doc].Def().Name)
	}
	b.WriteString(". Find tools with " + SearchToolsName + ".")
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: b.String()}}}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
