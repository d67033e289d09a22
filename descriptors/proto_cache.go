package descriptors

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The compile cache (ProtoSource.CacheDir).
//
// After each successful compile a ProtoSource writes, in the background,
// one entry: the slimmed FileDescriptorProtos of every file the Result
// holds but the bundle's, and the record of what the compile read (each
// file's path, size, modification time and SHA-256; the paths where an
// import was looked for and not found; where each file name was found).
// The entry's name is a hash of what else decides the compile's output:
// the cache format, protocompile's version, the import paths and files as
// given, and the working directory when a path is relative. A source with
// no successful compile yet (the first Discover of a process) reads its
// entry, builds the Result from it through the same pool a compile uses
// (so its descriptors are of the same kind and share the bundle's) and,
// when every input is as recorded by inputs.go's rules (a stat per file,
// a hash of those whose size or time moved), returns it without
// compiling. When some input changed, the descriptors of the entry serve
// as the last compile's, and only what changed is compiled
// (proto_reuse.go).
//
// The directory is created 0700 and entries are written 0600, to a
// temporary file renamed into place, so a reader sees a whole entry or
// none, and two processes writing the same entry leave one of them. Each
// key has one entry, overwritten by each compile, and the directory keeps
// the cacheKeep most recently written entries: older ones are removed. A
// directory that cannot be written logs one warning per source and the
// source works without the cache.
//
// An entry is what the gateway serves: its methods, and the scopes their
// options declare. So it is authenticated, not only checked: an
// HMAC-SHA256 of its content, under a key the gateway keeps beside the
// directory (DIR.key, made 0600 at the first write, 32 random bytes),
// is checked before anything is decoded. With an unkeyed checksum, which
// anyone can recompute, whoever could write the directory (a volume
// mounted there, an image layer, another account with access) could add
// methods or drop a declared scope. The key is beside the directory, not in it,
// so write access to the directory alone forges nothing; and a MAC holds
// however the directory came to be writable, which checking its
// permissions would not see (mounts, ACLs, images built elsewhere). The
// key file must be a regular file of the user running the gateway, with
// no access for others, or the cache is not used: whoever can read the
// key, or write the .proto files, can change the API the gateway serves
// either way. A truncated, corrupt, unreadable or forged entry is logged,
// removed and compiled over, never trusted.

const (
	// cacheFormat changes whenever what an entry holds or how the Result
	// is derived from it does (slimSourceInfo, the pool): it is part of
	// the key, so an entry of another format is never read.
	cacheFormat = 4
	cacheMagic  = "grpc-mcp-gateway proto cache\n"
	// cacheKeyBytes is the MAC key's length.
	cacheKeyBytes = 32
	cacheSuffix   = ".protocache"
	cacheKeep     = 8
	// cacheTempAge is how old a temporary file must be to be taken for a
	// crashed writer's and removed.
	cacheTempAge = time.Hour
)

// cacheEntry is the record an entry holds after its magic and MAC,
// encoded by appendRecord (proto_cache_record.go) and preceded by its
// length (a uvarint); the descriptors follow it, a FileDescriptorSet in
// the wire format, raw: inside a record, they were copied through growing
// chunks to be decoded (a third of reading the googleapis catalog's entry,
// when the record was gob's); apart, each file is unmarshalled where it
// lies, in parallel (unmarshalSet).
type cacheEntry struct {
	Key      [sha256.Size]byte
	Files    []cacheFile
	Missing  []string
	Resolved []cacheResolution
}

type cacheFile struct {
	Path  string
	Size  int64
	Mtime int64 // Unix nanoseconds
	Hash  [sha256.Size]byte
	Racy  bool
}

type cacheResolution struct {
	Name, Path string
	Missed     []string
	Unreadable bool
}

// protocompileVersion is the compiler's module version as linked into the
// binary, or "unknown".
var protocompileVersion = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path == "github.com/bufbuild/protocompile" {
			if m.Replace != nil {
				return m.Replace.Path + "@" + m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
})

// cacheKey identifies what decides the compile's output, besides the
// files' content.
func (s *ProtoSource) cacheKey() [sha256.Size]byte {
	h := sha256.New()
	put := func(v string) { fmt.Fprintf(h, "%d:%s", len(v), v) }
	put(fmt.Sprint(cacheFormat))
	put(protocompileVersion())
	relative := len(s.importPaths) == 0
	for _, ip := range s.importPaths {
		relative = relative || !filepath.IsAbs(ip)
	}
	if relative {
		wd, _ := os.Getwd()
		put(wd)
	}
	put(fmt.Sprint(len(s.importPaths)))
	for _, ip := range s.importPaths {
		put(ip)
	}
	for _, f := range s.files {
		put(f)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

func (s *ProtoSource) cachePath(key [sha256.Size]byte) string {
	return filepath.Join(s.CacheDir, hex.EncodeToString(key[:16])+cacheSuffix)
}

// loadCache returns the run the cache entry describes, its Result built,
// or nil when there is none or it cannot be used.
func (s *ProtoSource) loadCache(logger *slog.Logger) *compileRun {
	key := s.cacheKey()
	path := s.cachePath(key)
	run, err := s.readCache(key, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		logger.Debug("proto files: no compile cache entry", "path", path)
		return nil
	case err != nil:
		logger.Warn("proto files: ignoring the compile cache entry; compiling", "path", path, "err", err)
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			logger.Debug("proto files: could not remove the compile cache entry", "path", path, "err", rerr)
		}
		return nil
	}
	return run
}

// cacheKeyPath is the file holding the MAC key of the entries in dir:
// DIR.key, beside it.
func cacheKeyPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return "", fmt.Errorf("the cache directory %s has no parent to keep its key in", abs)
	}
	return filepath.Join(parent, filepath.Base(abs)+".key"), nil
}

// cacheMACKey reads the MAC key of s's entries, creating it when create
// is set and there is none. A key others may read or write, or one that
// is not a regular file of this user, is an error: the entries it signs
// are as trusted as it is.
func (s *ProtoSource) cacheMACKey(create bool) ([]byte, error) {
	path, err := cacheKeyPath(s.CacheDir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := newCacheKey(path); err != nil {
			return nil, fmt.Errorf("cache key %s: %w", path, err)
		}
		fi, err = os.Lstat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Not fs.ErrNotExist itself: the entry exists, its key not.
		return nil, fmt.Errorf("no cache key %s to check it with", path)
	case err != nil:
		return nil, fmt.Errorf("cache key: %w", err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("cache key %s: not a regular file (%v)", path, fi.Mode().Type())
	}
	if err := privateFile(fi); err != nil {
		return nil, fmt.Errorf("cache key %s: %w; it must be the gateway user's alone (chmod 600), or the cache is not used", path, err)
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cache key: %w", err)
	}
	if len(key) != cacheKeyBytes {
		return nil, fmt.Errorf("cache key %s: want %d bytes, got %d", path, cacheKeyBytes, len(key))
	}
	return key, nil
}

// newCacheKey writes a new random key at path, 0600; a key another
// process wrote first is kept.
func newCacheKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	key := make([]byte, cacheKeyBytes)
	rand.Read(key)
	// Written beside it and linked into place, so a reader never sees a
	// key cut short, and a key written meanwhile wins.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// cacheMAC is the MAC of an entry's body under key.
func cacheMAC(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(cacheMagic))
	m.Write(body)
	return m.Sum(nil)
}

// readCache reads and checks the entry at path, and builds its Result.
func (s *ProtoSource) readCache(key [sha256.Size]byte, path string) (*compileRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body, ok := bytes.CutPrefix(b, []byte(cacheMagic))
	if !ok || len(body) < sha256.Size {
		return nil, errors.New("not a cache entry, or truncated")
	}
	macKey, err := s.cacheMACKey(false)
	if err != nil {
		return nil, err
	}
	mac, body := body[:sha256.Size], body[sha256.Size:]
	if !hmac.Equal(cacheMAC(macKey, body), mac) {
		return nil, errors.New("its MAC does not match: truncated, corrupt, or altered by someone without this gateway's cache key")
	}
	n, w := protowire.ConsumeVarint(body)
	if w < 0 || n > uint64(len(body)-w) {
		return nil, errors.New("decoding: the record's length is out of range")
	}
	e, err := decodeRecord(body[w : w+int(n)])
	if err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if e.Key != key {
		return nil, errors.New("written for other files or another compiler")
	}
	fds, err := unmarshalSet(body[w+int(n):])
	if err != nil {
		return nil, fmt.Errorf("decoding the descriptors: %w", err)
	}
	p := newPool(slog.New(slog.DiscardHandler), "proto files")
	for _, fd := range fds {
		p.add(fd)
	}
	p.prebuild(s.names())
	res, err := namedResult(p, s.names())
	if err != nil {
		return nil, fmt.Errorf("building the descriptors: %w", err)
	}
	run := &compileRun{res: res, in: &inputs{missing: e.Missing}, resolved: make(map[string]resolution, len(e.Resolved))}
	for _, f := range e.Files {
		run.in.files = append(run.in.files, inputFile{path: f.Path, size: f.Size, mtime: time.Unix(0, f.Mtime), hash: f.Hash, racy: f.Racy})
	}
	slices.SortFunc(run.in.files, func(a, b inputFile) int { return strings.Compare(a.path, b.path) })
	slices.Sort(run.in.missing)
	for _, r := range e.Resolved {
		run.resolved[r.Name] = resolution{path: r.Path, missed: r.Missed, unreadable: r.Unreadable}
	}
	return run, nil
}

// unmarshalSet decodes a FileDescriptorSet's files, on every core: each
// is a length-delimited field 1, unmarshalled where it lies.
func unmarshalSet(set []byte) ([]*descriptorpb.FileDescriptorProto, error) {
	var raw [][]byte
	for len(set) > 0 {
		num, typ, n := protowire.ConsumeTag(set)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return nil, errors.New("not a FileDescriptorSet of files")
		}
		set = set[n:]
		b, n := protowire.ConsumeBytes(set)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		raw, set = append(raw, b), set[n:]
	}
	fds := make([]*descriptorpb.FileDescriptorProto, len(raw))
	errs := make([]error, len(raw))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(raw)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(raw); i = int(next.Add(1) - 1) {
				fds[i] = new(descriptorpb.FileDescriptorProto)
				errs[i] = unmarshalFile(raw[i], fds[i])
			}
		})
	}
	wg.Wait()
	return fds, errors.Join(errs...)
}

// cacheSnapshot is what a cache entry is written from, taken while the
// run's inputs are still the compile's own.
type cacheSnapshot struct {
	res      *Result
	files    []inputFile
	missing  []string
	resolved map[string]resolution
}

func snapshot(run *compileRun) *cacheSnapshot {
	return &cacheSnapshot{res: run.res, files: slices.Clone(run.in.files), missing: slices.Clone(run.in.missing), resolved: run.resolved}
}

// writeCache writes snap as the entry of s's key, atomically, and removes
// the oldest entries beyond cacheKeep.
func (s *ProtoSource) writeCache(logger *slog.Logger, snap *cacheSnapshot) error {
	start := time.Now()
	key := s.cacheKey()
	e := cacheEntry{Key: key, Missing: snap.missing}
	for _, f := range snap.files {
		e.Files = append(e.Files, cacheFile{Path: f.path, Size: f.size, Mtime: f.mtime.UnixNano(), Hash: f.hash, Racy: f.racy})
	}
	for name, r := range snap.resolved {
		e.Resolved = append(e.Resolved, cacheResolution{Name: name, Path: r.path, Missed: r.missed, Unreadable: r.unreadable})
	}
	slices.SortFunc(e.Resolved, func(a, b cacheResolution) int { return cmp.Compare(a.Name, b.Name) })
	// One file at a time, appended as FileDescriptorSet.file: the
	// catalog's descriptors are never all held as messages at once.
	var files []protoreflect.FileDescriptor
	snap.res.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if bundledFile(fd.Path()) != fd {
			files = append(files, fd)
		}
		return true
	})
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int { return cmp.Compare(a.Path(), b.Path()) })
	record := appendRecord(nil, &e)
	body := protowire.AppendVarint(nil, uint64(len(record)))
	body = append(body, record...)
	for _, fd := range files {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(fd))
		if err != nil {
			return fmt.Errorf("encoding %s: %w", fd.Path(), err)
		}
		// The source info, kept apart from the descriptors, follows in
		// its wire form: a field of a message may come in any order.
		if fi := snap.res.Comments.file(fd); fi != nil {
			b = protowire.AppendTag(b, fileSourceCodeInfo, protowire.BytesType)
			b = protowire.AppendBytes(b, fi.wire)
		}
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	if err := os.MkdirAll(s.CacheDir, 0o700); err != nil {
		return err
	}
	macKey, err := s.cacheMACKey(true)
	if err != nil {
		return err
	}
	sum := cacheMAC(macKey, body)

	tmp, err := os.CreateTemp(s.CacheDir, ".tmp-*"+cacheSuffix) // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // once renamed, a no-op
	for _, b := range [][]byte{[]byte(cacheMagic), sum, body} {
		if _, err := tmp.Write(b); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.cachePath(key)); err != nil {
		return err
	}
	logger.Debug("proto files: wrote the compile cache", "path", s.cachePath(key), "bytes", len(cacheMagic)+len(sum)+len(body),
		"duration", time.Since(start).Round(time.Millisecond))
	return pruneCache(s.CacheDir)
}

// pruneCache removes all but the cacheKeep most recently written entries
// of dir, and temporary files left by writers that did not finish.
func pruneCache(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type entry struct {
		name  string
		mtime time.Time
	}
	var entries []entry
	var errs []error
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(name, cacheSuffix) || de.IsDir() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if strings.HasPrefix(name, ".tmp-") {
			if time.Since(info.ModTime()) > cacheTempAge {
				errs = append(errs, os.Remove(filepath.Join(dir, name)))
			}
			continue
		}
		entries = append(entries, entry{name, info.ModTime()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return b.mtime.Compare(a.mtime) })
	for _, e := range entries[min(cacheKeep, len(entries)):] {
		if err := os.Remove(filepath.Join(dir, e.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
