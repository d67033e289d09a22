package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Redis implements mcp.Fleet: revocations are a sorted set (session key
// → expiry) that every replica mirrors in memory, kept current by a
// channel; cancellations are a channel only (a call that ended needs no
// record).
var _ mcp.Fleet = (*Redis)(nil)

// Channels and keys of the session state.
const (
	revokeChannel = "revoke"
	cancelChannel = "cancel"
	ackChannel    = "ack"
	revokedKey    = "revoked"
	// revokedByKey, then a principal's digest, is the sorted set of that
	// principal's revocations (session key → expiry), which its bound
	// counts.
	revokedByKey = "revokedby:"
	// pruneEvery is how many health checks pass between two sweeps of
	// expired tokens out of the mirror.
	pruneEvery = 60
	// revokedPage is how many revocations one read of the mirror's
	// rebuild asks for (ZSCAN's COUNT, a hint): each page is a short
	// command with its own deadline, so a large set neither blocks Redis
	// nor needs one long deadline.
	revokedPage = 1000
)

// The default bounds of the revocations the fleet keeps (Options).
// Revocations live as long as their tokens (--session-ttl, a day by
// default) and every replica holds all of them in memory and reads them
// all when it starts: 100,000 are about 8 MB per replica (82 bytes an
// entry of the mirror, measured), twice 14 MB in Redis (the fleet's set
// and the principals'), and a read of 100 pages. A principal that ends every
// session it opens with DELETE is far below 1,000 a day unless it opens a
// session a minute or more, and one that loops initialize and DELETE to
// fill the fleet's list stops there.
const (
	DefaultMaxRevocations             = 100_000
	DefaultMaxRevocationsPerPrincipal = 1_000
)

// errNotLoaded is why Revoked cannot tell: the mirror is not read whole
// yet, and the store, which would know, is down.
var errNotLoaded = errors.New("this replica has not read the revoked sessions yet, and the store does not answer")

// Revoked answers from the mirror once it has been read whole since the
// subscription last started, without waiting on Redis. Until then a token
// the mirror does not hold is looked up in Redis (one ZSCORE), so a
// replica that has just started, or has just come back from losing the
// store, never serves a session deleted while it was not listening. When
// it can neither tell from the mirror nor ask, it fails (ErrUnavailable):
// the request is refused, not served on a session that may be deleted.
func (r *Redis) Revoked(ctx context.Context, skey string) (bool, error) {
	// loaded is read before the mirror: if it was set, the mirror already
	// held every stored revocation when it was read here.
	loaded := r.loaded.Load()
	now := time.Now().Unix()
	r.mu.Lock()
	exp, ok := r.revoked[skey]
	r.mu.Unlock()
	if ok && now < exp {
		return true, nil
	}
	if loaded {
		return false, nil
	}
	if !r.up.Load() {
		return false, unavailable(errNotLoaded)
	}
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	score, err := r.c.ZScore(ctx, r.key(revokedKey), skey).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, unavailable(fmt.Errorf("looking up a session while the revoked sessions are read: %w", err))
	}
	if int64(score) <= now {
		return false, nil
	}
	r.learn(skey, int64(score))
	return true, nil
}

// RevocationsLoaded reports whether this replica holds every revocation
// in memory (Revoked then never waits on Redis), for the readiness
// report.
func (r *Redis) RevocationsLoaded() bool { return r.loaded.Load() }

// revokeScript records one revocation within the bounds, and publishes
// it, in one step: KEYS[1] the fleet's set, KEYS[2] (when the session has
// an authenticated owner) the owner's; ARGV session key, expiry, now
// (unix seconds), the owner's bound, the fleet's bound (0: none), the
// channel and the message. It answers {receivers, 0} when recorded, and
// {-1, first} or {-2, first} when the owner's or the fleet's bound is
// reached: first is when the earliest revocation counted expires. A
// session already revoked is recorded again whatever the bounds (it
// takes no room).
var revokeScript = redis.NewScript(`
local fleet, skey = KEYS[1], ARGV[1]
local exp, now = tonumber(ARGV[2]), ARGV[3]
local perWho, perFleet = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', fleet, '-inf', now)
if #KEYS > 1 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
end
if not redis.call('ZSCORE', fleet, skey) then
  if #KEYS > 1 and perWho > 0 and redis.call('ZCARD', KEYS[2]) >= perWho then
    return {-1, redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2] or '0'}
  end
  if perFleet > 0 and redis.call('ZCARD', fleet) >= perFleet then
    return {-2, redis.call('ZRANGE', fleet, 0, 0, 'WITHSCORES')[2] or '0'}
  end
end
redis.call('ZADD', fleet, exp, skey)
if #KEYS > 1 then
  redis.call('ZADD', KEYS[2], exp, skey)
  -- the owner's set goes when its last revocation expires
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  redis.call('EXPIREAT', KEYS[2], math.floor(tonumber(last[2])) + 1)
end
return {redis.call('PUBLISH', ARGV[6], ARGV[7]), 0}
`)

// Revoke records the session of skey (mcp.FleetKey), owned by principal,
// as revoked until expires, tells every replica, and waits (at most
// ackWait) until each has applied it, so that a request sent through any
// replica after DELETE answered gets 404. The confirmations come over a
// channel, so the wait holds no connection. Once the revocation is stored
// and published, a replica that does not confirm in time (cut off from
// Redis) is only logged: it reads the revocations again when its
// subscription comes back.
//
// Beyond MaxRevocationsPerPrincipal revocations of principal (anonymous
// sessions have no bound of their own) or MaxRevocations in all, nothing
// is recorded and the answer is an *mcp.RevocationLimitError: the session
// stays valid. Evicting the oldest revocation instead would bring back a
// session its owner was told was deleted, silently; a refusal is said
// to the client that asked, which can stop using the session, and
// affects no session already deleted. principal is stored only as a
// digest.
func (r *Redis) Revoke(ctx context.Context, skey, principal string, expires time.Time) error {
	exp := expires.Unix()
	ack := newID()
	acks := make(chan struct{}, 64)
	r.mu.Lock()
	r.waiting[ack] = acks
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, ack)
		r.mu.Unlock()
	}()
	msg := ack + "\n" + strconv.FormatInt(exp, 10) + "\n" + skey
	keys := []string{r.key(revokedKey)}
	if principal != "" {
		keys = append(keys, r.key(revokedByKey+digest(principal)))
	}
	res, err := revokeScript.Run(ctx, r.c, keys, skey, exp, time.Now().Unix(),
		r.maxRevokedPerWho, r.maxRevoked, r.key(revokeChannel), msg).Slice()
	if err != nil {
		return unavailable(err)
	}
	if len(res) != 2 {
		return unavailable(fmt.Errorf("the revoke script answered %v", res))
	}
	want, _ := res[0].(int64)
	if want < 0 {
		le := &mcp.RevocationLimitError{Limit: r.maxRevoked, PerPrincipal: want == -1}
		if le.PerPrincipal {
			le.Limit = r.maxRevokedPerWho
		}
		if first, err := strconv.ParseFloat(fmt.Sprint(res[1]), 64); err == nil && first > 0 {
			le.Free = time.Unix(int64(first), 0)
		}
		return le
	}
	// Here at once, whatever this replica's subscription does.
	r.learn(skey, exp)
	// want is the subscribed replicas, this one included.
	timeout := time.NewTimer(ackWait)
	defer timeout.Stop()
	for got := int64(0); got < want; got++ {
		select {
		case <-acks:
		case <-timeout.C:
			r.log.Warn("state: a session revocation was not confirmed by every replica in time; they read it when their subscription comes back", "replicas", want, "confirmed", got)
			return nil
		case <-ctx.Done():
			return nil // stored and published: the others apply it anyway
		}
	}
	return nil
}

// Cancel publishes a cancellation for the replica running the request.
func (r *Redis) Cancel(ctx context.Context, skey string, id json.RawMessage) error {
	if !r.up.Load() {
		return unavailable(errDown)
	}
	if err := r.c.Publish(ctx, r.key(cancelChannel), skey+"\n"+string(id)).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

// Listen adds l to those told of revocations and cancellations.
func (r *Redis) Listen(l mcp.FleetListener) {
	r.mu.Lock()
	r.listeners = append(r.listeners, l)
	r.mu.Unlock()
}

func (r *Redis) listening() []mcp.FleetListener {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.listeners
}

// watch is the store's one goroutine: it receives the channels, checks
// the store's health, and has the revocations read again whenever the
// subscription (re)starts, since messages published while it was down
// are lost. The reading runs beside it (load), so that a large set
// delays neither the channels nor the health checks.
func (r *Redis) watch() {
	defer close(r.done)
	defer r.loads.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ps := r.c.Subscribe(ctx, r.key(revokeChannel), r.key(cancelChannel), r.key(ackChannel))
	defer ps.Close()
	msgs := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(healthEvery))
	tick := time.NewTicker(healthEvery)
	defer tick.Stop()
	checks := 0
	r.check(ctx)
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			if r.check(ctx) && !r.loaded.Load() && !r.isLoading() {
				r.startLoad(ctx) // a read that never started: Redis was down when subscribing
			}
			if checks++; checks%pruneEvery == 0 {
				r.prune()
			}
			if renew := max(1, int(r.lease/healthEvery/3)); checks%renew == 0 {
				r.renewSlots(ctx)
			}
		case m, ok := <-msgs:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" && m.Channel == r.key(revokeChannel) {
					r.startLoad(ctx)
				}
			case *redis.Message:
				r.receive(ctx, m)
			}
		}
	}
}

// check pings the store and records the answer.
func (r *Redis) check(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if r.checkHook != nil {
		defer func() { r.checkHook(r.up.Load()) }()
	}
	if err := r.c.Ping(ctx).Err(); err != nil {
		if r.up.Load() {
			r.log.Warn("state: the store is unavailable; kept results, fleet-wide DELETE and relayed cancellations fail until it is back", "err", err)
		}
		r.setErr(err)
		return false
	}
	if !r.up.Swap(true) {
		r.log.Info("state: the store is available")
	}
	return true
}

func (r *Redis) isLoading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loading
}

// startLoad (re)starts reading the stored revocations into the mirror,
// cancelling a read already running: after a new subscription, what it
// read may miss what was published while the last one was down.
func (r *Redis) startLoad(ctx context.Context) {
	r.mu.Lock()
	if r.stopLoad != nil {
		r.stopLoad()
	}
	r.loaded.Store(false)
	r.loadGen++
	gen := r.loadGen
	ctx, cancel := context.WithCancel(ctx)
	r.stopLoad, r.loading = cancel, true
	r.mu.Unlock()
	r.loads.Go(func() {
		defer cancel()
		r.load(ctx, gen)
	})
}

// load merges the stored revocations into the mirror, a page at a time
// (ZSCAN), each page with its own deadline: a set of millions takes as
// many short commands as it needs, never one that a fixed deadline cuts
// off forever. A page that fails is asked again at the next health
// check, from where the read stopped; the failure marks the store
// unavailable (Up) until a check succeeds, and nothing else does: a slow
// read that progresses leaves the store up. Until it ends, Revoked asks
// Redis for each token the mirror does not hold.
func (r *Redis) load(ctx context.Context, gen uint64) {
	start := time.Now()
	var cursor uint64
	read, failing := 0, false
	for page := 0; ; page++ {
		if r.pageHook != nil {
			r.pageHook(ctx, page)
		}
		pctx, cancel := context.WithTimeout(ctx, ioTimeout)
		kv, next, err := r.c.ZScan(pctx, r.key(revokedKey), cursor, "", revokedPage).Result()
		cancel()
		if ctx.Err() != nil {
			return // a newer read, or Close
		}
		if err != nil {
			if !failing {
				r.log.Warn("state: reading the revoked sessions; this replica asks the store for each session token until it has read them all, and reads on at the next health check", "read", read, "err", err)
			}
			failing = true
			r.setErr(fmt.Errorf("reading the revoked sessions: %w", err))
			t := time.NewTimer(healthEvery)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		failing = false
		read += r.learnPage(kv)
		if cursor = next; cursor == 0 {
			break
		}
	}
	r.mu.Lock()
	if r.loadGen == gen {
		r.loaded.Store(true)
		r.loading = false
	}
	r.mu.Unlock()
	r.log.Debug("state: the revoked sessions are read", "sessions", read, "took", time.Since(start))
}

// learnPage adds a page of ZSCAN's answer (member, score, member, ...)
// to the mirror and returns how many of its revocations are still in
// force.
func (r *Redis) learnPage(kv []string) int {
	now := time.Now().Unix()
	n := 0
	for i := 0; i+1 < len(kv); i += 2 {
		score, err := strconv.ParseFloat(kv[i+1], 64)
		if err != nil || int64(score) <= now {
			continue
		}
		r.learn(kv[i], int64(score))
		n++
	}
	return n
}

// learn adds a revocation to the mirror and, the first time, tells the
// listeners: the same one arrives by message and by reload, and through
// Revoke on the replica that made it.
func (r *Redis) learn(skey string, exp int64) {
	r.mu.Lock()
	_, known := r.revoked[skey]
	r.revoked[skey] = exp
	ls := r.listeners
	r.mu.Unlock()
	if known {
		return
	}
	for _, l := range ls {
		l.SessionRevoked(skey)
	}
}

// prune forgets revoked tokens that have expired anyway.
func (r *Redis) prune() {
	now := time.Now().Unix()
	r.mu.Lock()
	for skey, exp := range r.revoked {
		if exp <= now {
			delete(r.revoked, skey)
		}
	}
	r.mu.Unlock()
}

// receive applies one message of the channels. Malformed ones (another
// program on the channel) are dropped.
func (r *Redis) receive(ctx context.Context, m *redis.Message) {
	switch m.Channel {
	case r.key(cancelChannel):
		skey, id, ok := strings.Cut(m.Payload, "\n")
		if !ok || !json.Valid([]byte(id)) {
			return
		}
		raw := json.RawMessage(bytes.TrimSpace([]byte(id)))
		for _, l := range r.listening() {
			l.RequestCancelled(skey, raw)
		}
	case r.key(revokeChannel):
		parts := strings.SplitN(m.Payload, "\n", 3)
		if len(parts) != 3 {
			return
		}
		exp, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			return
		}
		ack, skey := parts[0], parts[2]
		r.learn(skey, exp)
		if ack == "" {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		if err := r.c.Publish(ctx, r.key(ackChannel), ack).Err(); err != nil {
			r.log.Warn("state: confirming a session revocation", "err", err)
		}
	case r.key(ackChannel):
		r.mu.Lock()
		acks := r.waiting[m.Payload]
		r.mu.Unlock()
		if acks != nil {
			select {
			case acks <- struct{}{}:
			default: // more confirmations than replicas counted: enough
			}
		}
	}
}

// Subscribers is how many replicas (this one included) receive the
// fleet's revocations now.
func (r *Redis) Subscribers(ctx context.Context) (int64, error) {
	m, err := r.c.PubSubNumSub(ctx, r.key(revokeChannel)).Result()
	if err != nil {
		return 0, unavailable(err)
	}
	return m[r.key(revokeChannel)], nil
}
