// Package orderedjson reads and writes JSON keeping the order of each
// object's members, so that a schema the gateway rewrites (a tool
// override's fixed arguments) reads as the gateway wrote it, and stays
// byte-for-byte deterministic.
package orderedjson

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// Object is a JSON object that keeps its members' order, so that a schema
// rewritten by a tool override (overrides.go) reads as the gateway wrote
// it, and stays byte-for-byte deterministic.
type Object struct {
	keys []string
	vals map[string]any
}

// Keys are the members' names, in order; read-only.
func (o *Object) Keys() []string { return o.keys }

// Get is the member k, nil when absent.
func (o *Object) Get(k string) any { return o.vals[k] }

// Set sets the member k, last when it is new.
func (o *Object) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Del removes the member k.
func (o *Object) Del(k string) {
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

// Parse decodes b into *Object, []any, string, json.Number, bool and
// nil.
func Parse(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return read(dec)
}

func read(dec *json.Decoder) (any, error) {
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
		o := &Object{vals: make(map[string]any)}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := read(dec)
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
			v, err := read(dec)
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

// Append appends the JSON of v, a value Parse returns, to b.
func Append(b []byte, v any) []byte {
	switch x := v.(type) {
	case *Object:
		b = append(b, '{')
		for i, k := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = Append(b, x.vals[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = Append(b, e)
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

// Copy is a deep copy of v, a value Parse returns.
func Copy(v any) any {
	switch x := v.(type) {
	case *Object:
		c := &Object{keys: append([]string(nil), x.keys...), vals: make(map[string]any, len(x.vals))}
		for k, e := range x.vals {
			c.vals[k] = Copy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = Copy(e)
		}
		return c
	}
	return v
}
