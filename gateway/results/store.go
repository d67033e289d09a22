package results

import (
	"crypto/rand"
	"sync"
	"time"
)

// Defaults of a Store (StoreOptions zero values).
const (
	DefaultTTL        = 10 * time.Minute
	DefaultMaxBytes   = 64 << 20
	DefaultMaxEntries = 1000
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
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

// Store keeps whole results for a while so that a client can read what a
// cut left out. Each result is readable only by the owner that put it
// (the gateway's owner key is the session, or the principal for a
// stateless request), under an unguessable id. The store is bounded in
// bytes and count: when full, the oldest results go first, and expired
// ones are dropped whenever a result is put or read, so it needs no
// goroutine. It is safe for concurrent use.
type Store struct {
	ttl        time.Duration
	maxBytes   int64
	maxEntries int
	now        func() time.Time

	mu    sync.Mutex
	byID  map[string]*entry
	queue []*entry // in the order put, which is also the order of expiry
	head  int      // queue[:head] are gone
	bytes int64
}

type entry struct {
	id, owner string
	data      []byte
	expires   time.Time
}

// NewStore makes a Store with opts; nil means defaults.
func NewStore(opts *StoreOptions) *Store {
	s := &Store{ttl: DefaultTTL, maxBytes: DefaultMaxBytes, maxEntries: DefaultMaxEntries, now: time.Now, byID: make(map[string]*entry)}
	if opts != nil {
		if opts.TTL > 0 {
			s.ttl = opts.TTL
		}
		if opts.MaxBytes > 0 {
			s.maxBytes = opts.MaxBytes
		}
		if opts.MaxEntries > 0 {
			s.maxEntries = opts.MaxEntries
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
	}
	return s
}

// TTL is how long a result stays readable.
func (s *Store) TTL() time.Duration { return s.ttl }

// Put keeps data for owner and returns its id (128 random bits and more,
// in base32), or ok false when data is larger than the whole store. The
// store owns data afterwards: the caller must not change it.
func (s *Store) Put(owner string, data []byte) (id string, ok bool) {
	if int64(len(data)) > s.maxBytes {
		return "", false
	}
	e := &entry{id: rand.Text(), owner: owner, data: data}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	for s.bytes+int64(len(data)) > s.maxBytes || len(s.byID) >= s.maxEntries {
		s.drop(s.queue[s.head])
	}
	e.expires = now.Add(s.ttl)
	s.byID[e.id] = e
	s.queue = append(s.queue, e)
	s.bytes += int64(len(data))
	return e.id, true
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
	for s.head < len(s.queue) && !now.Before(s.queue[s.head].expires) {
		s.drop(s.queue[s.head])
	}
}

// drop forgets the front result and compacts the queue now and then, so
// its array does not grow with every result ever put.
func (s *Store) drop(e *entry) {
	delete(s.byID, e.id)
	s.bytes -= int64(len(e.data))
	s.queue[s.head] = nil
	s.head++
	if s.head > 64 && s.head*2 > len(s.queue) {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue = s.queue[:n]
		s.head = 0
	}
}
