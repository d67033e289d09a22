package descriptors

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Inputs of the file sources.
//
// A file source (ProtoSource, DescriptorSetSource) records every file it
// read (path, size, modification time and a SHA-256 of the content) and
// every path it looked for and did not find (an import searched along the
// import paths). Before it reads again it checks them: a file whose size
// and modification time are unchanged is taken as unchanged; a file whose
// size or time changed is read and hashed again, and counts as changed
// only when its content did (a touch, or a checkout that rewrote the same
// bytes, recompiles nothing). Two cases are read and hashed whatever their
// size and time say:
//
//   - a file modified less than racyWindow before it was read, since a
//     second write within the file system's timestamp granularity could
//     keep both its size and its time (git's "racily clean" entries);
//   - every file, every rehashEvery-th check, for writers that restore a
//     file's modification time (cp -p, rsync -t, tar) with a same-sized
//     content.
//
// A path that was missing and now exists is a change (it may shadow an
// import found further along the import paths), and so is anything after
// a read that failed for another reason than a missing file (a directory,
// permissions): such a source reads again every time. The check costs a stat
// per file, and at most a read and hash of each.

const (
	racyWindow  = 2 * time.Second
	rehashEvery = 10
)

// inputFile is one file a source read.
type inputFile struct {
	path  string
	size  int64
	mtime time.Time
	hash  [sha256.Size]byte
	// racy: modified so shortly before it was read that a later write
	// could keep its size and time.
	racy bool
}

// inputs is what one read of a source consulted.
type inputs struct {
	files   []inputFile // sorted by path
	missing []string    // sorted
	// unreadable: a file could not be read for another reason than its
	// absence (a directory, permissions, I/O): what the next read finds
	// cannot be told from here, so it always reads again.
	unreadable bool
	checks     int
}

// recorder collects inputs while a source reads; it is safe for
// concurrent use (the compiler reads imports from several goroutines).
type recorder struct {
	mu         sync.Mutex
	files      map[string]inputFile
	missing    map[string]bool
	unreadable bool
}

func newRecorder() *recorder {
	return &recorder{files: make(map[string]inputFile), missing: make(map[string]bool)}
}

// read returns the content of path and records it, or records that it
// does not exist.
func (r *recorder) read(path string) ([]byte, error) {
	b, in, err := readInput(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.missing[path] = true
	case err == nil:
		r.files[path] = in
	default:
		r.unreadable = true
	}
	return b, err
}

// inputs returns what was recorded.
func (r *recorder) inputs() *inputs {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := &inputs{unreadable: r.unreadable}
	for _, f := range r.files {
		in.files = append(in.files, f)
	}
	slices.SortFunc(in.files, func(a, b inputFile) int { return strings.Compare(a.path, b.path) })
	for p := range r.missing {
		in.missing = append(in.missing, p)
	}
	slices.Sort(in.missing)
	return in
}

// readInput reads path and describes it. The file's size and time are
// taken before its content, so a write during the read leaves a later
// time on disk than recorded, and the next check reads it again.
func readInput(path string) ([]byte, inputFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, inputFile{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, inputFile{}, err
	}
	if fi.IsDir() {
		return nil, inputFile{}, fmt.Errorf("%s: is a directory", path)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, inputFile{}, err
	}
	return b, inputFile{
		path:  path,
		size:  fi.Size(),
		mtime: fi.ModTime(),
		hash:  sha256.Sum256(b),
		racy:  time.Since(fi.ModTime()) < racyWindow,
	}, nil
}

// hashInput describes path as readInput does, streaming its content
// through the hash instead of holding it.
func hashInput(path string) (inputFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return inputFile{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return inputFile{}, err
	}
	h := sha256.New()
	buf := hashBuffers.Get().(*[]byte)
	defer hashBuffers.Put(buf)
	for {
		n, err := f.Read(*buf)
		h.Write((*buf)[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return inputFile{}, err
		}
	}
	in := inputFile{path: path, size: fi.Size(), mtime: fi.ModTime(), racy: time.Since(fi.ModTime()) < racyWindow}
	h.Sum(in.hash[:0])
	return in, nil
}

var hashBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// unchanged reports whether every file in is as it was read, by the rules
// in this file's comment. It updates the sizes and times of files whose
// content proved the same, so they are not hashed again next time. It is
// not safe for concurrent use.
func (in *inputs) unchanged() bool {
	if in.unreadable {
		return false
	}
	in.checks++
	full := in.checks%rehashEvery == 0
	for i := range in.files {
		f := &in.files[i]
		fi, err := os.Stat(f.path)
		if err != nil {
			return false
		}
		if !full && !f.racy && fi.Size() == f.size && fi.ModTime().Equal(f.mtime) {
			continue
		}
		now, err := hashInput(f.path)
		if err != nil || now.hash != f.hash {
			return false
		}
		*f = now
	}
	for _, p := range in.missing {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// fingerprint identifies the content read (not the times: a file touched
// but not edited keeps the fingerprint), salted with what else shaped the
// result (the source's kind and arguments).
func (in *inputs) fingerprint(salt ...string) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range salt {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	for _, f := range in.files {
		fmt.Fprintf(h, "f%d:%s", len(f.path), f.path)
		h.Write(f.hash[:])
	}
	for _, p := range in.missing {
		fmt.Fprintf(h, "m%d:%s", len(p), p)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// changes returns the recorded paths that are not as they were read: the
// files whose content changed or that can no longer be read, and the
// missing paths that now exist. Unlike unchanged it reads and hashes every
// file whatever its size and time say, since a compile that reuses what
// did not change would otherwise keep, for good, an edit that kept both
// (cp -p): a full compile reads every file anyway, so this costs no more.
// It refreshes the records of the files whose content proved the same.
// It is not safe for concurrent use.
func (in *inputs) changes() map[string]bool {
	changed := make(map[string]bool)
	var mu sync.Mutex
	var wg sync.WaitGroup
	// Hashing is the whole cost: a few workers, as a compile reads its
	// files in parallel too.
	next := make(chan int)
	for range min(4, len(in.files)) {
		wg.Go(func() {
			for i := range next {
				f := &in.files[i]
				now, err := hashInput(f.path)
				if err != nil || now.hash != f.hash {
					mu.Lock()
					changed[f.path] = true
					mu.Unlock()
					continue
				}
				*f = now
			}
		})
	}
	for i := range in.files {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, p := range in.missing {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			changed[p] = true
		}
	}
	return changed
}

// file returns the record of path.
func (in *inputs) file(path string) (inputFile, bool) {
	i, ok := slices.BinarySearchFunc(in.files, path, func(f inputFile, p string) int { return strings.Compare(f.path, p) })
	if !ok {
		return inputFile{}, false
	}
	return in.files[i], true
}

// reuse records f, a file read by an earlier compile and found unchanged
// (none when f.path is ""), and missed, the paths that compile found no
// file at, as if read and missed now.
func (r *recorder) reuse(f inputFile, missed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.path != "" {
		r.files[f.path] = f
	}
	for _, p := range missed {
		r.missing[p] = true
	}
}
