package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tokenFile holds the static tokens of a file and keeps them current.
//
// Only SHA-256 digests are kept: comparing fixed-size digests makes the
// comparison time independent of the tokens' lengths, and the secrets
// themselves do not sit in memory longer than a reload. Each token has its
// own [Principal], kept across reloads while the token stays in the file
// and revoked (its Revoked channel closed) when a reload drops it, so the
// WebSocket and SSE connections it opened end.
type tokenFile struct {
	path   string
	log    *slog.Logger
	tokens atomic.Pointer[[]staticToken]

	// last is what the poller saw at the last (attempted) load; pending
	// a different file seen since, not loaded until it settles. Only the
	// poller goroutine touches them after start.
	last, pending os.FileInfo

	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// startTokenFile loads path, failing if it cannot be read, and starts a
// poller that reloads it when its size, modification time or identity
// (an atomic rename over it) changes.
func startTokenFile(path string, every time.Duration, log *slog.Logger) (*tokenFile, error) {
	if every <= 0 {
		every = 3 * time.Second
	}
	tf := &tokenFile{path: path, log: log, quit: make(chan struct{}), done: make(chan struct{})}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: bearer tokens file: %w", err)
	}
	digests, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	tf.last = fi
	tokens := tf.replace(digests)
	tf.logLoaded("loaded bearer tokens", len(tokens))
	go tf.poll(every)
	return tf, nil
}

// staticToken is one token of the file.
type staticToken struct {
	digest [sha256.Size]byte
	p      *Principal
}

// lookup returns the principal of tok, or nil when tok is not one of the
// tokens. It compares the digest with every stored digest and never stops
// early or branches on a match, so the time taken says nothing about which
// token (or how much of one) matched.
func (tf *tokenFile) lookup(tok string) *Principal {
	d := sha256.Sum256([]byte(tok))
	tokens := *tf.tokens.Load()
	match, idx := 0, 0
	for i := range tokens {
		eq := subtle.ConstantTimeCompare(d[:], tokens[i].digest[:])
		idx = subtle.ConstantTimeSelect(eq, i, idx)
		match |= eq
	}
	if match != 1 {
		return nil
	}
	return tokens[idx].p
}

// replace installs the tokens of digests, keeping the principal of every
// token still present and revoking those of tokens that are gone. Only
// the poller (and start, before it) calls it.
func (tf *tokenFile) replace(digests [][sha256.Size]byte) []staticToken {
	old := map[[sha256.Size]byte]*Principal{}
	if cur := tf.tokens.Load(); cur != nil {
		for _, t := range *cur {
			old[t.digest] = t.p
		}
	}
	tokens := make([]staticToken, 0, len(digests))
	seen := make(map[[sha256.Size]byte]*Principal, len(digests))
	for _, d := range digests {
		p := seen[d] // a token listed twice keeps one principal
		if p == nil {
			if p = old[d]; p == nil {
				p = newStaticPrincipal(d)
			}
			seen[d] = p
		}
		tokens = append(tokens, staticToken{digest: d, p: p})
	}
	tf.tokens.Store(&tokens)
	for d, p := range old {
		if seen[d] == nil {
			close(p.revoked)
			tf.log.Info("auth: bearer token removed from the file: its connections close", "token_id", p.TokenID)
		}
	}
	return tokens
}

func (tf *tokenFile) poll(every time.Duration) {
	defer close(tf.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-tf.quit:
			return
		case <-t.C:
			tf.reloadIfChanged()
		}
	}
}

// reloadIfChanged re-reads the file once it looks different and has
// settled: it looks the same at two polls in a row. A file written in
// place (truncated, then written: what os.WriteFile, an editor or a shell
// redirection does) is empty or partial for a moment; loaded then, it
// would revoke every token it lacks, ending their sessions, though the
// file about to be written keeps them. Settling costs a change one poll
// interval more. A file that cannot be read or parsed leaves the current
// tokens in force: revoking access is done by editing the file, not by
// breaking it.
func (tf *tokenFile) reloadIfChanged() {
	fi, err := os.Stat(tf.path)
	if err != nil {
		if tf.last != nil {
			tf.log.Error("auth: cannot stat the bearer tokens file; keeping the current tokens", "file", tf.path, "err", err)
		}
		tf.last, tf.pending = nil, nil
		return
	}
	if sameFile(fi, tf.last) {
		tf.pending = nil
		return
	}
	if !sameFile(fi, tf.pending) {
		tf.pending = fi
		return
	}
	tf.last, tf.pending = fi, nil
	digests, err := readTokens(tf.path)
	if err != nil {
		tf.log.Error("auth: reloading the bearer tokens file failed; keeping the current tokens", "file", tf.path, "err", err)
		return
	}
	// Said before the tokens take effect, so that the warning of an
	// emptied file is in the log by the time anyone is refused for it.
	tf.logLoaded("reloaded bearer tokens", len(digests))
	tf.replace(digests)
}

// sameFile reports whether fi is the file of seen, unchanged: the same
// file (not one renamed over it), size and modification time.
func sameFile(fi, seen os.FileInfo) bool {
	return seen != nil && os.SameFile(fi, seen) && fi.Size() == seen.Size() && fi.ModTime().Equal(seen.ModTime())
}

func (tf *tokenFile) logLoaded(msg string, n int) {
	if n == 0 {
		tf.log.Warn("auth: the bearer tokens file has no tokens: every request to the MCP endpoints gets 401", "file", tf.path)
		return
	}
	tf.log.Info("auth: "+msg, "file", tf.path, "tokens", n)
}

func (tf *tokenFile) close() {
	tf.closeOnce.Do(func() { close(tf.quit) })
	<-tf.done
}

// readTokens parses a tokens file: one token per line, surrounding space
// trimmed, blank lines and lines starting with '#' ignored. A line with
// inner whitespace is an error rather than a token nobody could send.
func readTokens(path string) ([][sha256.Size]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: bearer tokens file: %w", err)
	}
	var out [][sha256.Size]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("auth: bearer tokens file %s line %d: a token cannot contain spaces", path, n)
		}
		out = append(out, sha256.Sum256([]byte(line)))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth: bearer tokens file %s: %w", path, err)
	}
	return out, nil
}
