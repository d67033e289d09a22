package gateway

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// jobj is a JSON object that keeps its members' order, so that a schema
// rewritten by a tool override (overrides.go) reads as the gateway wrote
// it, and stays byte-for-byte deterministic.
type jobj struct {
	keys []string
	vals map[string]any
}

func (o *jobj) get(k string) any { return o.vals[k] }

func (o *jobj) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jobj) del(k string) {
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

// parseOrdered decodes b into *jobj, []any, string, json.Number, bool and
// nil.
func parseOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readOrdered(dec)
}

func readOrdered(dec *json.Decoder) (any, error) {
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
		o := &jobj{vals: make(map[string]any)}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.set(k, v)
		}
		_, err := dec.Token()
		return o, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := readOrdered(dec)
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

func writeOrdered(b []byte, v any) []byte {
	switch x := v.(type) {
	case *jobj:
		b = append(b, '{')
		for i, k := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = writeOrdered(b, x.vals[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = writeOrdered(b, e)
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

func copyValue(v any) any {
	switch x := v.(type) {
	case *jobj:
		c := &jobj{keys: append([]string(nil), x.keys...), vals: make(map[string]any, len(x.vals))}
		for k, e := range x.vals {
			c.vals[k] = copyValue(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = copyValue(e)
		}
		return c
	}
	return v
}
