package cluster

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// Reconnect pauses of the listener: doubling from the first to the last.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// listen delivers the other backends' events until ctx ends, listening
// again (and catching up on the log) whenever its connection fails.
func (b *Bus) listen(ctx context.Context) {
	var (
		last      int64 // the newest id delivered or skipped
		listening bool  // a connection listened before
		seen      = newSeen(seenMax)
		pause     = listenRetryMin
	)
	for ctx.Err() == nil {
		l, err := b.st.Listen(ctx)
		if err != nil {
			b.log.Warn("cluster: listen for other backends' events", "err", err)
			if !sleep(ctx, pause) {
				return
			}
			pause = min(2*pause, listenRetryMax)
			continue
		}
		pause = listenRetryMin
		if !listening {
			// First connection: only what happens from now on is news.
			if last, err = b.st.LastEventID(ctx); err != nil {
				b.log.Warn("cluster: read the event log", "err", err)
			}
			listening = true
			close(b.listening)
		} else {
			last = b.catchUp(ctx, last, seen)
		}
		last = b.follow(ctx, l, last, seen)
		_ = l.Close()
	}
}

// follow delivers the events of each notification until the connection
// fails or ctx ends, and returns the newest id delivered.
func (b *Bus) follow(ctx context.Context, l *store.Listener, last int64, seen *seenIDs) int64 {
	for {
		first, end, err := l.Wait(ctx)
		if err != nil {
			if ctx.Err() == nil {
				b.log.Warn("cluster: event notifications stopped; listening again", "err", err)
			}
			return last
		}
		evs, err := b.st.ReadEvents(ctx, first, end, readMax)
		if err != nil {
			b.log.Warn("cluster: read events", "err", err)
			continue
		}
		b.deliver(ctx, evs, seen)
		last = max(last, end)
	}
}

// catchUp delivers what the log holds after id (at most a few pages: a
// backend that was away for long has missed events for good, and its
// subscribers read the board again anyway).
func (b *Bus) catchUp(ctx context.Context, id int64, seen *seenIDs) int64 {
	for range 10 {
		evs, err := b.st.EventsAfter(ctx, id, readMax)
		if err != nil || len(evs) == 0 {
			return id
		}
		b.deliver(ctx, evs, seen)
		id = evs[len(evs)-1].ID
	}
	return id
}

// deliver publishes other backends' events here and runs their handlers.
func (b *Bus) deliver(ctx context.Context, evs []store.Event, seen *seenIDs) {
	for _, e := range evs {
		if e.Origin == b.id || !seen.add(e.ID) {
			continue
		}
		if b.lag != nil && !e.At.IsZero() {
			b.lag(time.Since(e.At))
		}
		b.deliverOne(ctx, e)
	}
}

// deliverOne publishes e here and runs its handlers, in a "bus.deliver"
// span that continues the publisher's trace when e carries one.
func (b *Bus) deliverOne(ctx context.Context, e store.Event) {
	defer endSpan(b.startDeliver(ctx, e))
	payload := json.RawMessage(e.Payload)
	if e.Topic != "" {
		b.local.Publish(e.Topic, e.Name, payload)
	}
	b.mu.RLock()
	hs := b.handlers[e.Name]
	b.mu.RUnlock()
	for _, h := range hs {
		h(payload)
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// seenIDs remembers the last n event ids delivered, so that an event read
// both in a catch-up and through its notification is delivered once.
type seenIDs struct {
	ids  map[int64]bool
	ring []int64
	next int
}

func newSeen(n int) *seenIDs { return &seenIDs{ids: make(map[int64]bool, n), ring: make([]int64, n)} }

// add records id; false when it was recorded already.
func (s *seenIDs) add(id int64) bool {
	if s.ids[id] {
		return false
	}
	if old := s.ring[s.next]; old != 0 {
		delete(s.ids, old)
	}
	s.ring[s.next], s.ids[id] = id, true
	s.next = (s.next + 1) % len(s.ring)
	return true
}
