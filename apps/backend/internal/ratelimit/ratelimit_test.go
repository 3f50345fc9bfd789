package ratelimit

import (
	"testing"
	"time"
)

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestBucketsPerCallerAndKind(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := New(Config{Calls: Limit{Rate: 10, Burst: 5}, Writes: Limit{Rate: 1, Burst: 2}, Now: c.now})
	for i := range 2 {
		if _, _, ok := l.Take("a", true); !ok {
			t.Fatalf("write %d within the burst: refused", i)
		}
	}
	wait, kind, ok := l.Take("a", true)
	if ok || kind != "writes" || wait != time.Second {
		t.Fatalf("third write: got ok=%v kind=%q wait=%v, want refused on writes, 1s", ok, kind, wait)
	}
	// A refused write spent no call: three calls are left of five.
	for i := range 3 {
		if _, _, ok := l.Take("a", false); !ok {
			t.Fatalf("read %d: refused, want the calls the refused write did not spend", i)
		}
	}
	if _, kind, ok := l.Take("a", false); ok || kind != "calls" {
		t.Fatalf("sixth call: got ok=%v kind=%q, want refused on calls", ok, kind)
	}
	if got := l.Peek("a"); got != 100*time.Millisecond {
		t.Errorf("peek: got %v, want 100ms (one call at 10/s)", got)
	}
	// Another caller is unaffected.
	if _, _, ok := l.Take("b", true); !ok {
		t.Error("another caller: refused, want its own full buckets")
	}
	c.t = c.t.Add(time.Second)
	if _, _, ok := l.Take("a", true); !ok {
		t.Error("a second later: refused, want a refilled write")
	}
	if l.Peek("a") != 0 {
		t.Error("peek after refill: want 0")
	}
}

func TestZeroRateIsNoLimit(t *testing.T) {
	l := New(Config{})
	if !l.Off() {
		t.Fatal("zero config: want off")
	}
	for range 1000 {
		if _, _, ok := l.Take("a", true); !ok {
			t.Fatal("no limit: refused")
		}
	}
	var nilL *Limiter
	if !nilL.Off() || nilL.Peek("a") != 0 {
		t.Error("nil limiter: want off")
	}
}
