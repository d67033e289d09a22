package auth

import (
	"crypto/sha256"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTokenFileWrittenInPlace: a tokens file truncated and then written
// (os.WriteFile, an editor, `>`), seen by the poller between the two, is
// not loaded empty: the tokens the new file keeps are never revoked, and
// the one it drops is, once the file has settled. The poller is driven by
// hand at each state the file goes through.
func TestTokenFileWrittenInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("alpha\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := startTokenFile(path, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer tf.close()
	principal := func(tok string) *Principal {
		for _, st := range *tf.tokens.Load() {
			if st.digest == sha256.Sum256([]byte(tok)) {
				return st.p
			}
		}
		return nil
	}
	alpha, beta := principal("alpha"), principal("beta")
	revoked := func(p *Principal) bool {
		select {
		case <-p.revoked:
			return true
		default:
			return false
		}
	}

	// Truncated: empty for a moment, seen by one poll.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	tf.reloadIfChanged()
	if revoked(alpha) || revoked(beta) {
		t.Fatal("a file seen empty while it was being written revoked its tokens")
	}
	// Written: beta stays, alpha goes; applied once it looks the same at
	// two polls.
	if err := os.WriteFile(path, []byte("beta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The write may land within the truncation's clock tick; a distinct
	// modification time keeps the test about settling, not mtime grain.
	if err := os.Chtimes(path, time.Now(), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	tf.reloadIfChanged()
	if revoked(alpha) || revoked(beta) {
		t.Fatal("a change was loaded before it settled")
	}
	tf.reloadIfChanged()
	if !revoked(alpha) || revoked(beta) || principal("beta") != beta || principal("alpha") != nil {
		t.Errorf("after the file settled: alpha revoked %v (want true), beta revoked %v (want false), beta the same principal %v",
			revoked(alpha), revoked(beta), principal("beta") == beta)
	}
}
