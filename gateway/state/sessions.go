package state

import (
	"bytes"
	"context"
	"encoding/json"
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
	// pruneEvery is how many health checks pass between two sweeps of
	// expired tokens out of the mirror.
	pruneEvery = 60
)

// Revoked answers from the mirror: it never waits on Redis.
func (r *Redis) Revoked(skey string) bool {
	r.mu.Lock()
	exp, ok := r.revoked[skey]
	r.mu.Unlock()
	return ok && time.Now().Unix() < exp
}

// Revoke records the session of skey (mcp.FleetKey) as revoked until
// expires, tells every replica, and waits (at most ackWait) until each
// has applied it, so that a request sent through any replica after DELETE
// answered gets 404. The confirmations come over a channel, so the wait
// holds no connection. Once the revocation is stored and published, a
// replica that does not confirm in time (cut off from Redis) is only
// logged: it reads the revocations again when its subscription comes
// back.
func (r *Redis) Revoke(ctx context.Context, skey string, expires time.Time) error {
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
	var pub *redis.IntCmd
	_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, r.key(revokedKey), redis.Z{Score: float64(exp), Member: skey})
		p.ZRemRangeByScore(ctx, r.key(revokedKey), "-inf", strconv.FormatInt(time.Now().Unix(), 10))
		pub = p.Publish(ctx, r.key(revokeChannel), msg)
		return nil
	})
	if err != nil {
		return unavailable(err)
	}
	// Here at once, whatever this replica's subscription does.
	r.learn(skey, exp)
	want := pub.Val() // the subscribed replicas, this one included
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
// the store's health, and reads the revocations again whenever the
// subscription (re)starts, since messages published while it was down
// are lost.
func (r *Redis) watch() {
	defer close(r.done)
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
			wasUp := r.up.Load()
			if r.check(ctx) && (!wasUp || !r.loaded.Load()) {
				r.reload(ctx) // until one succeeds, after every reconnection
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
					r.loaded.Store(false)
					r.reload(ctx)
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

// reload merges the stored revocations into the mirror, and ends the
// sessions it learns of here.
func (r *Redis) reload(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	now := strconv.FormatInt(time.Now().Unix(), 10)
	zs, err := r.c.ZRangeByScoreWithScores(ctx, r.key(revokedKey), &redis.ZRangeBy{Min: "(" + now, Max: "+inf"}).Result()
	if err != nil {
		r.log.Warn("state: reading the revoked sessions; trying again at the next health check", "err", err)
		return
	}
	defer r.loaded.Store(true)
	for _, z := range zs {
		skey, _ := z.Member.(string)
		r.learn(skey, int64(z.Score))
	}
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
