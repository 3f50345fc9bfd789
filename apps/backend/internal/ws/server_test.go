package ws

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func subscribe(t *testing.T, c *websocket.Conn, topics string) {
	t.Helper()
	writeJSON(t, c, `{"id":"sub","type":"request","action":"subscribe","payload":{"topics":`+topics+`}}`)
	if m := readMsg(t, c); m.Type != TypeResponse {
		t.Fatalf("subscribe: got %+v, want response", m)
	}
}

// nextActions reads n notifications and returns their actions.
func nextActions(t *testing.T, c *websocket.Conn, n int) []string {
	t.Helper()
	var out []string
	for range n {
		m := readMsg(t, c)
		if m.Type != TypeNotification || m.ID != "" {
			t.Fatalf("got %+v, want a notification without id", m)
		}
		out = append(out, m.Action)
	}
	return out
}

func TestPublishAndNotify(t *testing.T) {
	t.Parallel()
	s, url := startServer(t, ServerConfig{}, newToy())
	a, b, c := dialRaw(t, url, goodToken+"a"), dialRaw(t, url, goodToken+"b"), dialRaw(t, url, goodToken+"c")
	subscribe(t, a, `["workspace:1","all"]`)
	subscribe(t, b, `["workspace:2","all"]`)
	subscribe(t, c, `["all"]`)
	s.Publish("workspace:1", "task.created", map[string]string{"id": "t1"})
	s.Notify(func(c *Conn) bool { return c.Principal().(*testPrincipal).name == "b" }, "session.mode_changed", nil)
	// Each connection's queue is ordered, so the barrier proves what did
	// not arrive before it.
	s.Publish("all", "barrier", nil)
	for _, tc := range []struct {
		name string
		conn *websocket.Conn
		want string
	}{
		{"a", a, "task.created,barrier"},
		{"b", b, "session.mode_changed,barrier"},
		{"c", c, "barrier"},
	} {
		if got := strings.Join(nextActions(t, tc.conn, strings.Count(tc.want, ",")+1), ","); got != tc.want {
			t.Errorf("conn %s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A notification nobody receives is not even encoded: an unencodable
// payload is only reported once a connection is to receive it.
func TestNotifyEncodesOnlyForReceivers(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))
	s, url := startServer(t, ServerConfig{Logger: log}, newToy())
	a := dialRaw(t, url, goodToken+"a")
	subscribe(t, a, `["all"]`)
	logged := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	s.Publish("nobody", "bad", make(chan int))
	if strings.Contains(logged(), "ws notify") {
		t.Fatalf("got %q logged for a notification nobody receives, want nothing", logged())
	}
	s.Publish("all", "bad", make(chan int))
	if !strings.Contains(logged(), "ws notify") {
		t.Fatal("got nothing logged for an unencodable notification to a subscriber, want the error")
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// waitGoroutines waits until the goroutine count is back to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: got %d, want <= %d\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServerCloseIsClean(t *testing.T) { // not parallel: counts goroutines
	base := runtime.NumGoroutine()
	d := newToy()
	var disconnects atomic.Int64
	s := NewServer(ServerConfig{Authenticate: authenticate, Dispatch: d.dispatch, OnDisconnect: func(*Conn) { disconnects.Add(1) }})
	ts := httptest.NewServer(s)
	url := "ws" + strings.TrimPrefix(ts.URL, "http")
	c1, c2 := dialRaw(t, url, goodToken), dialRaw(t, url, goodToken)
	echoOK(t, c1)
	writeJSON(t, c2, `{"id":"held","type":"request","action":"block"}`)
	<-d.started
	s.Close() // cancels the blocked request's context and waits for it
	for _, c := range []*websocket.Conn{c1, c2} {
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
			t.Errorf("after Close: got %v, want close 1001", err)
		}
		_ = c.Close()
	}
	if got := disconnects.Load(); got != 2 {
		t.Errorf("OnDisconnect calls: got %d, want 2", got)
	}
	_, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + goodToken}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dial after Close: got %v, want 503", err)
	}
	closeBody(t, resp)
	ts.Close()
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, base)
}

func TestShutdownDrainsRequests(t *testing.T) {
	t.Parallel()
	d := newToy()
	s, url := startServer(t, ServerConfig{}, d)
	c := dialRaw(t, url, goodToken)
	writeJSON(t, c, `{"id":"held","type":"request","action":"block"}`)
	<-d.started
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(testCtx(t)) }()
	// Requests arriving while draining are refused; poll until Shutdown
	// has started draining (before that, echo is still served).
	for {
		writeJSON(t, c, `{"id":"late","type":"request","action":"echo"}`)
		m := readMsg(t, c)
		if m.Type == TypeError {
			if p := errPayload(t, m); m.ID != "late" || p.Code != kanban.CodeUnavailable {
				t.Fatalf("late request: got id=%q %s, want late UNAVAILABLE", m.ID, p.Code)
			}
			break
		}
	}
	close(d.release)
	if m := readMsg(t, c); m.ID != "held" || m.Type != TypeResponse {
		t.Fatalf("held request: got %+v, want its response before the close", m)
	}
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Errorf("after Shutdown: got %v, want close 1001", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: got %v, want nil", err)
	}

	// A request that outlives the deadline is cancelled.
	d2 := newToy()
	s2, url2 := startServer(t, ServerConfig{}, d2)
	c2 := dialRaw(t, url2, goodToken)
	writeJSON(t, c2, `{"id":"stuck","type":"request","action":"block"}`)
	<-d2.started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s2.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown past deadline: got %v, want context.Canceled", err)
	}
}
