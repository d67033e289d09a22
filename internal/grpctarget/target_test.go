package grpctarget

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in, scheme, uri string
		plaintext       bool // by default, with no TLS settings
	}{
		{"127.0.0.1:50051", "dns", "dns:///127.0.0.1:50051", true},
		{"localhost:50051", "dns", "dns:///localhost:50051", true},
		{"[::1]:50051", "dns", "dns:///[::1]:50051", true},
		{"zoo.internal:50051", "dns", "dns:///zoo.internal:50051", false},
		{"dns:///zoo.internal:50051", "dns", "dns:///zoo.internal:50051", false},
		{"dns:///localhost:50051", "dns", "dns:///localhost:50051", true},
		{"dns://10.0.0.53/zoo.internal:50051", "dns", "dns://10.0.0.53/zoo.internal:50051", false},
		{"unix:///var/run/zoo.sock", "unix", "unix:///var/run/zoo.sock", true},
		{"unix:zoo.sock", "unix", "unix:zoo.sock", true},
		{"unix:///run/a=b.sock", "unix", "unix:///run/a=b.sock", true},
		{"unix-abstract:zoo", "unix-abstract", "unix-abstract:zoo", true},
		{"passthrough:///10.0.0.7:50051", "passthrough", "passthrough:///10.0.0.7:50051", false},
		{"passthrough:///127.0.0.1:50051", "passthrough", "passthrough:///127.0.0.1:50051", true},
		{"127.0.0.1:1,127.0.0.1:2", StaticScheme, StaticScheme + ":///127.0.0.1:1,127.0.0.1:2", true},
		{"10.0.0.1:1,127.0.0.1:2", StaticScheme, StaticScheme + ":///10.0.0.1:1,127.0.0.1:2", false},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got.Scheme != tc.scheme || got.URI != tc.uri || got.Loopback() != tc.plaintext {
			t.Errorf("%s: scheme %s uri %s plaintext %v, want %s %s %v", tc.in, got.Scheme, got.URI, got.Loopback(), tc.scheme, tc.uri, tc.plaintext)
		}
	}
}

func TestParseTargetErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "backend address is empty",
		"zoo":                      `backend address "zoo": want HOST:PORT`,
		"unix://host/x.sock":       `backend address "unix://host/x.sock": a unix target names a path`,
		"dns:///":                  `backend address "dns:///": no address after the scheme`,
		"passthrough:///nohost":    `want passthrough:///HOST:PORT`,
		"a:1,,b:2":                 "an empty address in the list",
		"a:1,unix:///x":            "a list of replicas is HOST:PORT,HOST:PORT,... (no schemes)",
		"a:1,a:1":                  "a:1 is listed twice",
		"nosuchscheme:///x:1":      `backend address "nosuchscheme:///x:1": grpc-go has no resolver for the scheme "nosuchscheme"`,
		"http://zoo.internal:8080": `backend address "http://zoo.internal:8080": grpc-go has no resolver for the scheme "http"`,
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error containing %q", in, err, want)
		}
	}
}

func TestSplitBackendFlag(t *testing.T) {
	for _, tc := range []struct {
		in, name, target string
		named            bool
	}{
		{"zoo=127.0.0.1:1", "zoo", "127.0.0.1:1", true},
		{"zoo=unix:///run/zoo.sock", "zoo", "unix:///run/zoo.sock", true},
		{"zoo=10.0.0.1:1,10.0.0.2:1", "zoo", "10.0.0.1:1,10.0.0.2:1", true},
		{"unix:///run/a=b.sock", "", "unix:///run/a=b.sock", false},
		{"127.0.0.1:1", "", "127.0.0.1:1", false},
		{"Zoo=127.0.0.1:1", "Zoo", "127.0.0.1:1", true}, // named; the name is then refused
	} {
		name, target, named := SplitBackendFlag(tc.in)
		if name != tc.name || target != tc.target || named != tc.named {
			t.Errorf("%s: %q %q %v, want %q %q %v", tc.in, name, target, named, tc.name, tc.target, tc.named)
		}
	}
}
