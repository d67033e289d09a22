package state

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Redis implements mcp.FleetSlots: a principal's requests in flight on
// every replica are the members of one sorted set, each scored with the
// end of its lease. A replica renews the leases of its requests while they
// run, so the slots of a replica that dies come free when its leases end
// (Options.SlotLease) instead of never.
var _ mcp.FleetSlots = (*Redis)(nil)

// DefaultSlotLease is Options.SlotLease's default.
const DefaultSlotLease = 30 * time.Second

// acquireScript takes a slot: ARGV member, limit, lease (ms).
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// renewSrc extends the leases still held: ARGV lease (ms), members. It is
// sent whole (EVAL) in a pipeline, where a script not yet loaded could not
// fall back from EVALSHA.
const renewSrc = `
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0
`

// slotKey is the set of principal's requests in flight, named by the
// principal's digest.
func (r *Redis) slotKey(principal string) string { return r.key("inflight:" + digest(principal)) }

// AcquireSlot takes one of principal's limit slots across the fleet. When
// the store is known to be down it fails at once with ErrUnavailable, so a
// call never waits for a store that is not there.
func (r *Redis) AcquireSlot(ctx context.Context, principal string, limit int) (func(), error) {
	if !r.up.Load() {
		return nil, unavailable(errDown)
	}
	member := r.replica + ":" + strconv.FormatUint(r.seq.Add(1), 10)
	n, err := acquireScript.Run(ctx, r.c, []string{r.slotKey(principal)}, member, limit, r.lease.Milliseconds()).Int()
	if err != nil {
		return nil, unavailable(err)
	}
	if n == 0 {
		return nil, mcp.ErrNoSlot
	}
	r.mu.Lock()
	r.slots[member] = principal
	r.mu.Unlock()
	return func() { r.releaseSlot(member, principal) }, nil
}

// releaseSlot gives a slot back without holding up the call's answer: the
// removal runs in the background (Close waits for it). One that fails
// leaves the slot to its lease.
func (r *Redis) releaseSlot(member, principal string) {
	r.mu.Lock()
	delete(r.slots, member)
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.bg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		r.c.ZRem(ctx, r.slotKey(principal), member)
	}()
}

// renewSlots extends the leases of this replica's requests in flight, one
// script per principal in one round trip.
func (r *Redis) renewSlots(ctx context.Context) {
	r.mu.Lock()
	byWho := make(map[string][]any)
	for member, who := range r.slots {
		byWho[who] = append(byWho[who], member)
	}
	r.mu.Unlock()
	if len(byWho) == 0 || !r.up.Load() {
		return // nothing to renew, or the health check says it would fail
	}
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for who, members := range byWho {
			p.Eval(ctx, renewSrc, []string{r.slotKey(who)}, append([]any{r.lease.Milliseconds()}, members...)...)
		}
		return nil
	})
	if err != nil {
		r.log.Warn("state: renewing the leases of requests in flight", "err", err)
	}
}

// InFlight is how many of principal's slots are held on every replica
// together (tests, and an operator's question).
func (r *Redis) InFlight(ctx context.Context, principal string) (int64, error) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	n, err := r.c.ZCount(ctx, r.slotKey(principal), "("+now, "+inf").Result()
	if err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}
