package results

import (
	"container/list"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// Defaults of a Store (StoreOptions zero values).
const (
	DefaultTTL        = 10 * time.Minute
	DefaultMaxBytes   = 64 << 20
	DefaultMaxEntries = 1000
	// DefaultPrincipalShare is the share of the store one principal may
	// fill by default: one in DefaultPrincipalShare (half) of its bytes
	// and of its entries.
	DefaultPrincipalShare = 2
)

// Errors of a result store (this package's Store and the fleet's shared
// one, package state).
var (
	// ErrNotFound: no such result, or it expired, or it is another
	// owner's (the answer is the same).
	ErrNotFound = errors.New("result not found")
	// ErrTooLarge: the result is larger than the store, or one
	// principal's part of it, keeps.
	ErrTooLarge = errors.New("result larger than the store keeps")
)

// StoreOptions bound a Store; zero values mean the defaults.
type StoreOptions struct {
	// TTL is how long a result stays readable after it was put.
	TTL time.Duration
	// MaxBytes bounds the bytes of all results kept; a result larger than
	// it is not kept at all.
	MaxBytes int64
	// MaxEntries bounds how many results are kept.
	MaxEntries int
	// MaxBytesPerPrincipal bounds the bytes of the results one principal
	// keeps, all its owners (sessions) together; a result larger than it
	// is not kept. Default MaxBytes / DefaultPrincipalShare; negative
	// means no per-principal bound.
	MaxBytesPerPrincipal int64
	// MaxEntriesPerPrincipal bounds how many results one principal
	// keeps. Default MaxEntries / DefaultPrincipalShare; negative means
	// no per-principal bound.
	MaxEntriesPerPrincipal int
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

// Store keeps whole results for a while so that a client can read what a
// cut left out. Each result is readable only by the owner that put it
// (the gateway's owner key is the session, or the principal for a
// stateless request), under an unguessable id. It is safe for concurrent
// use, and needs no goroutine: expired results are dropped whenever a
// result is put or read.
//
// The store is bounded in bytes and count, and so is each principal's
// part of it, so that one principal cannot push another's results out
// within their TTL:
//
//   - A principal over its own bound makes room from its own results,
//     the oldest first.
//   - When the whole store is full, room is made from the principal that
//     holds the most (bytes when bytes are short, results when the count
//     is), its oldest first: whoever fills the store pays for it, and a
//     principal holding less than the others is the last to lose a
//     result.
//
// The anonymous principal ("") has no bound of its own: without
// authentication there is nobody to share with (or, on stdio, one user).
type Store struct {
	ttl          time.Duration
	maxBytes     int64
	maxEntries   int
	quotaBytes   int64 // 0: no per-principal bound
	quotaEntries int   // 0: no per-principal bound
	now          func() time.Time

	mu    sync.Mutex
	byID  map[string]*entry
	all   list.List // every result, oldest first, which is also the order of expiry
	byWho map[string]*holder
	bytes int64
}

// holder is one principal's part of the store.
type holder struct {
	name    string
	results list.List // its results, oldest first
	bytes   int64
}

type entry struct {
	id, owner string
	who       *holder
	data      []byte
	expires   time.Time
	inAll     *list.Element
	inHolder  *list.Element
}

// NewStore makes a Store with opts; nil means defaults.
func NewStore(opts *StoreOptions) *Store {
	var o StoreOptions
	if opts != nil {
		o = *opts
	}
	s := &Store{now: time.Now,
		byID: make(map[string]*entry), byWho: make(map[string]*holder)}
	s.ttl = limit.OrDefault(o.TTL, DefaultTTL)
	s.maxBytes = limit.OrDefault(o.MaxBytes, DefaultMaxBytes)
	s.maxEntries = limit.OrDefault(o.MaxEntries, DefaultMaxEntries)
	switch {
	case o.MaxBytesPerPrincipal == 0:
		s.quotaBytes = max(1, s.maxBytes/DefaultPrincipalShare)
	case o.MaxBytesPerPrincipal > 0:
		s.quotaBytes = min(o.MaxBytesPerPrincipal, s.maxBytes)
	}
	switch {
	case o.MaxEntriesPerPrincipal == 0:
		s.quotaEntries = max(1, s.maxEntries/DefaultPrincipalShare)
	case o.MaxEntriesPerPrincipal > 0:
		s.quotaEntries = min(o.MaxEntriesPerPrincipal, s.maxEntries)
	}
	if o.Now != nil {
		s.now = o.Now
	}
	return s
}

// TTL is how long a result stays readable.
func (s *Store) TTL() time.Duration { return s.ttl }

// Put keeps data for owner, counted against principal's part of the
// store ("" for anonymous, which has no bound of its own), and returns
// its id (128 random bits and more, in base32), or ok false when data is
// larger than the whole store or than one principal may keep. Room is
// made as the Store's doc says. The store owns data afterwards: the
// caller must not change it.
func (s *Store) Put(owner, principal string, data []byte) (id string, ok bool) {
	n := int64(len(data))
	if n > s.maxBytes || principal != "" && s.quotaBytes > 0 && n > s.quotaBytes {
		return "", false
	}
	e := &entry{id: rand.Text(), owner: owner, data: data}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	if h := s.byWho[principal]; h != nil && principal != "" {
		for h.results.Len() > 0 && (s.quotaBytes > 0 && h.bytes+n > s.quotaBytes || s.quotaEntries > 0 && h.results.Len() >= s.quotaEntries) {
			s.drop(h.results.Front().Value.(*entry))
		}
	}
	for s.bytes+n > s.maxBytes {
		s.drop(s.heaviest(func(h *holder) int64 { return h.bytes }))
	}
	for len(s.byID) >= s.maxEntries {
		s.drop(s.heaviest(func(h *holder) int64 { return int64(h.results.Len()) }))
	}
	h := s.byWho[principal]
	if h == nil {
		h = &holder{name: principal}
		s.byWho[principal] = h
	}
	e.who = h
	e.expires = now.Add(s.ttl)
	e.inAll = s.all.PushBack(e)
	e.inHolder = h.results.PushBack(e)
	h.bytes += n
	s.byID[e.id] = e
	s.bytes += n
	return e.id, true
}

// heaviest is the oldest result of the principal that holds the most by
// size; of two that hold as much, the one whose oldest result is older
// pays. The store is not empty.
func (s *Store) heaviest(size func(*holder) int64) *entry {
	var top *entry
	var topSize int64
	for _, h := range s.byWho {
		e := h.results.Front().Value.(*entry)
		if sz := size(h); top == nil || sz > topSize || sz == topSize && e.expires.Before(top.expires) {
			top, topSize = e, sz
		}
	}
	return top
}

// Get returns the result id of owner while it lives. Another owner's id
// is not found, exactly like an unknown one.
func (s *Store) Get(owner, id string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	e := s.byID[id]
	if e == nil || e.owner != owner {
		return nil, false
	}
	return e.data, true
}

// Len returns how many results are kept and their bytes.
func (s *Store) Len() (n int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	return len(s.byID), s.bytes
}

// expire drops the results whose time is up; they are at the front.
func (s *Store) expire(now time.Time) {
	for f := s.all.Front(); f != nil && !now.Before(f.Value.(*entry).expires); f = s.all.Front() {
		s.drop(f.Value.(*entry))
	}
}

// drop forgets e, and its principal when e was its last result, so the
// principals held are those with results.
func (s *Store) drop(e *entry) {
	delete(s.byID, e.id)
	s.all.Remove(e.inAll)
	h := e.who
	h.results.Remove(e.inHolder)
	n := int64(len(e.data))
	h.bytes -= n
	s.bytes -= n
	if h.results.Len() == 0 {
		delete(s.byWho, h.name)
	}
}
