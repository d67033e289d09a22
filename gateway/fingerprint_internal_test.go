package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// TestFingerprintSeesComments: a Result without its source's own
// fingerprint (a server that skipped a service, an overlay of such) is
// hashed whole, comments included, so a change to a comment alone
// rebuilds the tools its descriptions come from.
func TestFingerprintSeesComments(t *testing.T) {
	discover := func(comment string) *descriptors.Result {
		dir := t.TempDir()
		src := "syntax = \"proto3\";\npackage fp.v1;\nmessage M {}\nservice S {\n  // " + comment + "\n  rpc Get(M) returns (M);\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "fp.proto"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := descriptors.NewProtoSource([]string{dir}, []string{"fp.proto"}).Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := *res
		out.Fingerprint = [32]byte{}
		return &out
	}
	a, b, again := discover("Gets an M."), discover("Reads an M."), discover("Gets an M.")
	if fingerprint(a) == fingerprint(b) {
		t.Error("the fingerprint ignores a changed comment")
	}
	if fingerprint(a) != fingerprint(again) {
		t.Error("the fingerprint differs for the same files")
	}
}
