package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// decodedWithTruncated is WithTruncated as it was before it scanned the
// root: it decodes the schema and its properties into maps. It is the
// oracle the scanning one must agree with, byte for byte.
func decodedWithTruncated(s json.RawMessage) (out json.RawMessage, name string, merge bool, err error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(s, &root); err != nil {
		return nil, "", false, fmt.Errorf("schema: output schema: %w", err)
	}
	if string(bytes.TrimSpace(root["additionalProperties"])) != "false" {
		return s, TruncatedProperty, false, nil
	}
	var props map[string]json.RawMessage
	if p, ok := root["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return nil, "", false, fmt.Errorf("schema: output schema properties: %w", err)
		}
	}
	name = TruncatedProperty
	for props[name] != nil {
		name = "_" + name
	}
	member, _ := json.Marshal(name)
	member = append(append(member, ':'), truncatedSchema...)
	var b []byte
	if end := decodedPropertiesEnd(s); end > 0 {
		b = append(b, s[:end]...)
		if len(props) > 0 {
			b = append(b, ',')
		}
		b = append(b, member...)
		b = append(b, s[end:]...)
	} else {
		b = append(b, s[:len(s)-1]...)
		b = append(b, `,"properties":{`...)
		b = append(b, member...)
		b = append(b, "}}"...)
	}
	if !json.Valid(b) {
		return nil, "", false, fmt.Errorf("schema: output schema: cannot add %q", name)
	}
	return b, name, true, nil
}

func decodedPropertiesEnd(s []byte) int {
	dec := json.NewDecoder(bytes.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0
		}
		if key == "properties" {
			return int(dec.InputOffset()) - 1
		}
	}
	return 0
}

// decodedRootRequired is RootRequired as it was: a decoding of the schema.
func decodedRootRequired(s json.RawMessage) ([]string, error) {
	var root struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(s, &root); err != nil {
		return nil, fmt.Errorf("schema: output schema: %w", err)
	}
	return root.Required, nil
}

// sameAsDecoded fails t when WithTruncated, RootRequired or
// ReadTruncation answer s other than the decoding oracles do: other bytes,
// name, merge, required members or error text.
func sameAsDecoded(t *testing.T, s []byte) {
	t.Helper()
	out, name, merge, err := WithTruncated(s)
	wOut, wName, wMerge, wErr := decodedWithTruncated(s)
	if !bytes.Equal(out, wOut) || name != wName || merge != wMerge || fmt.Sprint(err) != fmt.Sprint(wErr) {
		t.Fatalf("WithTruncated(%q) = %q %q %v %v, want %q %q %v %v", s, out, name, merge, err, wOut, wName, wMerge, wErr)
	}
	req, err := RootRequired(s)
	wReq, wReqErr := decodedRootRequired(s)
	if fmt.Sprintf("%q", req) != fmt.Sprintf("%q", wReq) || (req == nil) != (wReq == nil) || fmt.Sprint(err) != fmt.Sprint(wReqErr) {
		t.Fatalf("RootRequired(%q) = %q %v, want %q %v", s, req, err, wReq, wReqErr)
	}
	// ReadTruncation: both answers, or the first error.
	want := Truncation{Schema: wOut, Member: wName, Merge: wMerge, Required: wReq}
	if wErr == nil {
		wErr = wReqErr
	}
	if wErr != nil {
		want = Truncation{}
	}
	got, err := ReadTruncation(s)
	if !bytes.Equal(got.Schema, want.Schema) || got.Member != want.Member || got.Merge != want.Merge ||
		fmt.Sprintf("%q", got.Required) != fmt.Sprintf("%q", want.Required) || (got.Required == nil) != (want.Required == nil) ||
		fmt.Sprint(err) != fmt.Sprint(wErr) {
		t.Fatalf("ReadTruncation(%q) = %+v %v, want %+v %v", s, got, err, want, wErr)
	}
}

// TestWithTruncatedAsDecoded: on every input and output schema of the
// test messages (and of the googleapis ones when their sources are there,
// outside -short and -race), and on hand-picked odd ones, the scanning
// WithTruncated, RootRequired and ReadTruncation answer what decoding
// the schema answers.
func TestWithTruncatedAsDecoded(t *testing.T) {
	var mds []protoreflect.MessageDescriptor
	testFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		mds = appendMessages(mds, f.Messages())
		return true
	})
	// The googleapis schemas take seconds to compile and build, minutes
	// under the race detector (make test's unit run).
	if haveGoogleapis() && !testing.Short() && !raceEnabled {
		seen := map[protoreflect.FullName]bool{}
		for _, m := range googleapisMethods(t) {
			for _, md := range []protoreflect.MessageDescriptor{m.Input(), m.Output()} {
				if !seen[md.FullName()] {
					seen[md.FullName()] = true
					mds = append(mds, md)
				}
			}
		}
	}
	n := 0
	for _, md := range mds {
		for _, build := range []func(protoreflect.MessageDescriptor, *Options) (json.RawMessage, error){Input, Output} {
			s, err := build(md, &Options{UseProtoNames: n%2 == 1})
			if err != nil {
				continue // a placeholder or a message the builder refuses
			}
			sameAsDecoded(t, s)
			n++
		}
	}
	for _, s := range oddSchemas {
		sameAsDecoded(t, []byte(s))
	}
	t.Logf("%d schemas built, %d odd ones", n, len(oddSchemas))
}

// oddSchemas are JSON the builder never writes, for the error paths and
// the spellings a scanner could get wrong.
var oddSchemas = []string{
	``, `[`, `null`, ` null `, `[]`, `"x"`, `1`, `{}`, `{"additionalProperties":false}`,
	` {"additionalProperties" : false , "properties" : { } } `,
	`{"additionalProperties":false} `,
	`{"additionalProperties":false,"properties":null}`,
	`{"additionalProperties":false,"properties":[]}`,
	`{"additionalProperties":false,"properties":{"truncated":null,"_truncated":1,"___truncated":{}}}`,
	`{"additionalProperties":false,"properties":{"\u0074runcated":{}}}`,
	`{"\u0061dditionalProperties":false,"\u0070roperties":{"a":{}}}`,
	`{"additionalProperties":true,"properties":{}}`,
	`{"additionalProperties":{"type":"string"}}`,
	`{"required":["a","b\"c"],"REQUIRED_":1}`,
	`{"Required":["x"]}`,
	`{"required":null}`,
	`{"required":[1]}`,
	`{"required":"a"}`,
	`{"required":["\ud800"]}`,
	"{\"required\":[\"\xff\"]}",
	`{"a":"}","additionalProperties":false,"b":["{"],"properties":{"c":"\\\"}"}}`,
}

// appendMessages appends ms and their nested messages, map entries left
// out.
func appendMessages(out []protoreflect.MessageDescriptor, ms protoreflect.MessageDescriptors) []protoreflect.MessageDescriptor {
	for i := range ms.Len() {
		md := ms.Get(i)
		if !md.IsMapEntry() {
			out = append(out, md)
		}
		out = appendMessages(out, md.Messages())
	}
	return out
}

// FuzzWithTruncated: on any bytes whose root, and root properties, name
// each member once, the scanning WithTruncated, RootRequired and
// ReadTruncation answer what decoding answers. (Given twice, a member counts as its last
// occurrence when decoded, while the decoding WithTruncated spliced into
// the first "properties": a schema the builder never writes.)
func FuzzWithTruncated(f *testing.F) {
	for _, s := range oddSchemas {
		f.Add([]byte(s))
	}
	for _, name := range []protoreflect.FullName{"schematest.v1.Shelf", "schematest.v1.Kitchen", "schematest.v1.Node"} {
		s, err := Output(testMessage(f, name), nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if !uniqueMembers(s) {
			t.Skip()
		}
		sameAsDecoded(t, s)
	})
}

// uniqueMembers reports whether s is not a JSON object, or one whose
// members, and those of its "properties", are each given once (members
// named "required" in any case counting as one name, as decoding matches
// them).
func uniqueMembers(s []byte) bool {
	var root map[string]json.RawMessage
	if json.Unmarshal(s, &root) != nil || root == nil {
		return true
	}
	if countMembers(s) != len(root) {
		return false
	}
	folded := 0
	for k := range root {
		if strings.EqualFold(k, "required") {
			folded++
		}
	}
	if folded > 1 {
		return false
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(root["properties"], &props) != nil || props == nil {
		return true
	}
	return countMembers(root["properties"]) == len(props)
}

// countMembers counts the members of the JSON object s as given,
// duplicates included.
func countMembers(s []byte) int {
	dec := json.NewDecoder(bytes.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return -1
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return -1
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return -1
		}
		n++
	}
	return n
}
