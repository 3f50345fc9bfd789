package agent

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// A permission request waits for the updates the agent wrote before it,
// and only for those.
func TestPermissionWaitsForEarlierUpdates(t *testing.T) {
	o := newUpdateOrder()
	exited := make(chan struct{})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"session/request_permission"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"p1"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{}}`,
		`not json at all`,
	}, "\n") + "\n"
	out, err := io.ReadAll(o.reader(strings.NewReader(in), exited))
	if err != nil || string(out) != in {
		t.Fatalf("the reader changed the stream: %v", err)
	}
	done := make(chan struct{})
	go func() {
		o.waitBefore(context.Background(), "p1")
		close(done)
	}()
	o.processedOne()
	select {
	case <-done:
		t.Fatal("the request went ahead of the second earlier update")
	case <-time.After(50 * time.Millisecond):
	}
	o.processedOne()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("the request still waits after the earlier updates were processed")
	}
	// An unknown request does not wait; a known one is forgotten once waited for.
	start := time.Now()
	o.waitBefore(context.Background(), "p1")
	o.waitBefore(context.Background(), "other")
	if time.Since(start) > 500*time.Millisecond {
		t.Fatal("an unknown request waited")
	}
	close(exited)
}
