package logring

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestBounds(t *testing.T) {
	r := New(3, 1<<10)
	for i := range 5 {
		_, _ = fmt.Fprintf(r, "record %d\n", i)
	}
	recs, dropped := r.Records()
	if got := string(bytes.Join(recs, nil)); got != "record 2\nrecord 3\nrecord 4\n" || dropped != 2 {
		t.Fatalf("got %q (dropped %d), want the last 3 records (dropped 2)", got, dropped)
	}

	r = New(100, 100)
	for range 10 {
		_, _ = r.Write([]byte(strings.Repeat("x", 29) + "\n")) // 30 bytes each
	}
	recs, dropped = r.Records()
	if len(recs) != 3 || dropped != 7 {
		t.Fatalf("byte bound: got %d records (dropped %d), want 3 (dropped 7)", len(recs), dropped)
	}

	r = New(10, 1<<20)
	_, _ = r.Write([]byte(strings.Repeat("y", 3*MaxRecordBytes)))
	recs, _ = r.Records()
	if len(recs[0]) != MaxRecordBytes+len(cut) || !strings.HasSuffix(string(recs[0]), cut) {
		t.Fatalf("long record: got %d bytes, want it cut to %d plus the mark", len(recs[0]), MaxRecordBytes)
	}
}

func TestWriteDoesNotRetainTheCallersBuffer(t *testing.T) {
	r := New(4, 1<<10)
	buf := []byte("first\n")
	_, _ = r.Write(buf)
	copy(buf, "XXXXX\n")
	if recs, _ := r.Records(); string(recs[0]) != "first\n" {
		t.Fatalf("got %q, want the record as written", recs[0])
	}
}

func TestTee(t *testing.T) {
	r := New(0, 0)
	var out bytes.Buffer
	log := slog.New(r.Tee(slog.NewTextHandler(&out, nil), slog.LevelInfo)).With("component", "test")
	log.Debug("hidden")
	log.Info("kept", "n", 1)
	recs, _ := r.Records()
	if len(recs) != 1 || !strings.Contains(string(recs[0]), `msg=kept component=test n=1`) {
		t.Fatalf("ring: got %q, want the info record with its attributes", recs)
	}
	if !strings.Contains(out.String(), "msg=kept") {
		t.Fatalf("next handler: got %q, want the record there too", out.String())
	}
}
