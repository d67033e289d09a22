package overrides

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// JSON that keeps the order of each object's members, so that the input
// schema a tool's argument rules rewrite (Args.RewriteSchema) reads as
// the gateway wrote it, and stays byte-for-byte deterministic. (The
// schema package builds its schemas from ordered nodes of its own, which
// are never parsed back; these are the rewrite's, parsed from the JSON
// the schema package wrote, numbers kept as written.)

// jsonObject is a JSON object that keeps its members' order.
type jsonObject struct {
	keys []string
	vals map[string]any
}

// Keys are the members' names, in order; read-only.
func (o *jsonObject) Keys() []string { return o.keys }

// Get is the member k, nil when absent.
func (o *jsonObject) Get(k string) any { return o.vals[k] }

// Set sets the member k, last when it is new.
func (o *jsonObject) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Del removes the member k.
func (o *jsonObject) Del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// parseJSON decodes b into *jsonObject, []any, string, json.Number, bool and
// nil.
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readJSON(dec)
}

func readJSON(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := &jsonObject{vals: make(map[string]any)}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := readJSON(dec)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
		}
		_, err := dec.Token()
		return o, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := readJSON(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return nil, errors.New("unexpected delimiter")
}

// appendJSON appends the JSON of v, a value parseJSON returns, to b.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case *jsonObject:
		b = append(b, '{')
		for i, k := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = appendJSON(b, x.vals[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case string:
		return jsonstr.Append(b, x)
	case json.Number:
		return append(b, x...)
	case json.RawMessage:
		return append(b, x...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	}
	return append(b, "null"...)
}

// copyJSON is a deep copy of v, a value parseJSON returns.
func copyJSON(v any) any {
	switch x := v.(type) {
	case *jsonObject:
		c := &jsonObject{keys: append([]string(nil), x.keys...), vals: make(map[string]any, len(x.vals))}
		for k, e := range x.vals {
			c.vals[k] = copyJSON(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = copyJSON(e)
		}
		return c
	}
	return v
}
