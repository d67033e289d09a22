package state

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// resultLimits are results.StoreOptions resolved as results.NewStore
// resolves them.
type resultLimits struct {
	ttl          time.Duration
	maxBytes     int64
	maxEntries   int
	quotaBytes   int64 // 0: no per-principal bound
	quotaEntries int   // 0: no per-principal bound
}

func newResultLimits(o results.StoreOptions) resultLimits {
	l := resultLimits{
		ttl:        limit.OrDefault(o.TTL, results.DefaultTTL),
		maxBytes:   limit.OrDefault(o.MaxBytes, results.DefaultMaxBytes),
		maxEntries: limit.OrDefault(o.MaxEntries, results.DefaultMaxEntries),
	}
	switch {
	case o.MaxBytesPerPrincipal == 0:
		l.quotaBytes = max(1, l.maxBytes/results.DefaultPrincipalShare)
	case o.MaxBytesPerPrincipal > 0:
		l.quotaBytes = min(o.MaxBytesPerPrincipal, l.maxBytes)
	}
	switch {
	case o.MaxEntriesPerPrincipal == 0:
		l.quotaEntries = max(1, l.maxEntries/results.DefaultPrincipalShare)
	case o.MaxEntriesPerPrincipal > 0:
		l.quotaEntries = min(o.MaxEntriesPerPrincipal, l.maxEntries)
	}
	return l
}

// putScript keeps one result and its accounting in one step, with the
// same bounds and the same order of eviction as results.Store (see its
// doc): expired results leave first; a principal over its own bound makes
// room from its own results, oldest first; a full store makes room from
// the principal holding the most, oldest first. The store's clock is
// Redis's (TIME), so replicas whose clocks differ agree on expiry.
//
// Keys, all under the prefix KEYS[1]; ID, owner and principal (WHO) are
// the digests Put makes of them (digest), never the values themselves:
//
//	r:ID        hash {o: owner, d: data}, expiring with the result
//	idx         zset ID → expiry (ms), every result
//	rp:WHO      zset ID → order of putting (seq), one principal's results
//	seq         the counter of that order
//	size, who   hashes ID → bytes, ID → principal
//	bytes       the bytes of every result
//	wbytes      zset principal → bytes held
//	wcount      zset principal → results held
//
// ARGV: id, owner, principal, data, ttl (ms), max bytes, max entries,
// quota bytes, quota entries (0: none).
var putScript = redis.NewScript(`
local p = KEYS[1]
local idx, size, who, total, wbytes, wcount = p..'idx', p..'size', p..'who', p..'bytes', p..'wbytes', p..'wcount'
local id, owner, w, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, maxBytes, maxEntries = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local qBytes, qEntries = tonumber(ARGV[8]), tonumber(ARGV[9])
local n = string.len(data)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- drop forgets result x. xw is the principal the caller found x under,
-- when it knows: x then leaves that principal's set even if the who hash
-- lost it (a Redis that evicts keys), so the loops below always advance.
local function drop(x, xw)
  local xn = tonumber(redis.call('HGET', size, x) or '0')
  xw = xw or redis.call('HGET', who, x) or ''
  redis.call('DEL', p..'r:'..x)
  redis.call('ZREM', idx, x)
  redis.call('ZREM', p..'rp:'..xw, x)
  redis.call('HDEL', size, x)
  redis.call('HDEL', who, x)
  redis.call('DECRBY', total, xn)
  redis.call('ZINCRBY', wbytes, -xn, xw)
  if tonumber(redis.call('ZINCRBY', wcount, -1, xw)) <= 0 then
    redis.call('ZREM', wcount, xw)
    redis.call('ZREM', wbytes, xw)
  end
end

-- the oldest result of principal x, or nil (then x is dropped from the
-- tallies, which had drifted)
local function oldest(x)
  local o = redis.call('ZRANGE', p..'rp:'..x, 0, 0)
  if #o == 0 then
    redis.call('ZREM', wcount, x)
    redis.call('ZREM', wbytes, x)
    return nil
  end
  return o[1]
end

for _, x in ipairs(redis.call('ZRANGEBYSCORE', idx, '-inf', now, 'LIMIT', 0, 1000)) do
  drop(x)
end
-- Whatever was left behind by a drop that could not find everything
-- (evicted keys), it expires from the index too.
redis.call('ZREMRANGEBYSCORE', idx, '-inf', now)

-- Every loop below removes at least one member of the set it reads, and
-- is capped besides, so no state of the keys makes it spin.
local budget = 100000
if w ~= '' then
  local pk = p..'rp:'..w
  while budget > 0 do
    budget = budget - 1
    local cnt = redis.call('ZCARD', pk)
    if cnt == 0 then break end
    local held = tonumber(redis.call('ZSCORE', wbytes, w) or '0')
    if not ((qBytes > 0 and held + n > qBytes) or (qEntries > 0 and cnt >= qEntries)) then break end
    drop(redis.call('ZRANGE', pk, 0, 0)[1], w)
  end
end

while budget > 0 and tonumber(redis.call('GET', total) or '0') + n > maxBytes do
  budget = budget - 1
  local top = redis.call('ZREVRANGE', wbytes, 0, 0)
  if #top == 0 then
    redis.call('SET', total, 0) -- nobody holds anything: the tally drifted
    break
  end
  local x = oldest(top[1])
  if x then drop(x, top[1]) end
end
while budget > 0 and redis.call('ZCARD', idx) >= maxEntries do
  budget = budget - 1
  local top = redis.call('ZREVRANGE', wcount, 0, 0)
  if #top == 0 then
    local x = redis.call('ZRANGE', idx, 0, 0)[1]
    if not x then break end
    drop(x) -- in the index but no principal's: the tallies drifted
  else
    local x = oldest(top[1])
    if x then drop(x, top[1]) end
  end
end

local exp = now + ttl
local seq = redis.call('INCR', p..'seq')
redis.call('HSET', p..'r:'..id, 'o', owner, 'd', data)
redis.call('PEXPIRE', p..'r:'..id, ttl)
redis.call('ZADD', idx, exp, id)
redis.call('ZADD', p..'rp:'..w, seq, id)
redis.call('HSET', size, id, n)
redis.call('HSET', who, id, w)
redis.call('INCRBY', total, n)
redis.call('ZINCRBY', wbytes, n, w)
redis.call('ZINCRBY', wcount, 1, w)
return 1
`)

// TTL is how long a kept result stays readable.
func (r *Redis) TTL() time.Duration { return r.res.ttl }

// Put keeps data for owner, counted against principal's part of the
// store, as results.Store.Put does, and returns its id. It fails with
// results.ErrTooLarge when data is larger than the store or than one
// principal may keep, and with ErrUnavailable when Redis cannot be
// reached.
func (r *Redis) Put(ctx context.Context, owner, principal string, data []byte) (string, error) {
	n := int64(len(data))
	if n > r.res.maxBytes || principal != "" && r.res.quotaBytes > 0 && n > r.res.quotaBytes {
		return "", results.ErrTooLarge
	}
	if !r.up.Load() {
		return "", unavailable(errDown) // at once: the call is waiting
	}
	// The store holds digests of the id (which alone lets whoever holds
	// it read an anonymous stateless result), of the owner (which names
	// the session by its id, a credential) and of the principal.
	id := rand.Text()
	err := putScript.Run(ctx, r.c, []string{r.prefix}, digest(id), digest(owner), digest(principal), data,
		r.res.ttl.Milliseconds(), r.res.maxBytes, r.res.maxEntries, r.res.quotaBytes, r.res.quotaEntries).Err()
	if err != nil {
		return "", unavailable(err)
	}
	return id, nil
}

// Get returns owner's result id while it lives; another owner's is
// results.ErrNotFound, exactly like an unknown one.
func (r *Redis) Get(ctx context.Context, owner, id string) ([]byte, error) {
	if !r.up.Load() {
		return nil, unavailable(errDown)
	}
	v, err := r.c.HMGet(ctx, r.key("r:"+digest(id)), "o", "d").Result()
	var re redis.Error
	switch {
	case errors.As(err, &re):
		return nil, results.ErrNotFound // Redis refused the key (not a result of ours)
	case err != nil:
		return nil, unavailable(err)
	case len(v) != 2:
		return nil, results.ErrNotFound
	}
	o, _ := v[0].(string)
	d, ok := v[1].(string)
	if !ok || o != digest(owner) {
		return nil, results.ErrNotFound
	}
	return []byte(d), nil
}

// Len returns how many results are kept and their bytes (tests and
// metrics).
func (r *Redis) Len(ctx context.Context) (int, int64, error) {
	var card *redis.IntCmd
	var total *redis.StringCmd
	if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		card = p.ZCard(ctx, r.key("idx"))
		total = p.Get(ctx, r.key("bytes"))
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, unavailable(err)
	}
	b, _ := total.Int64()
	return int(card.Val()), b, nil
}
