package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	c, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("Dial: got %v, want nil", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestClientCall(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, ServerConfig{}, newToy())
	c := dialClient(t, ClientConfig{URL: url, Token: goodToken + "carol"})
	ctx := testCtx(t)

	var who struct{ Name string }
	if err := c.Call(ctx, "whoami", nil, &who); err != nil || who.Name != "carol" {
		t.Errorf("whoami: got %q, %v; want carol, nil", who.Name, err)
	}
	err := c.Call(ctx, "fail.domain", nil, nil)
	var ke *kanban.Error
	if !errors.As(err, &ke) || ke.Code != kanban.CodeNotFound || ke.Message != "task not found" || ke.Field != "task_id" {
		t.Errorf("fail.domain: got %#v, want NOT_FOUND task not found (field task_id)", err)
	}
	err = c.Call(ctx, "fail.plain", nil, nil)
	if kanban.ErrorCode(err) != kanban.CodeInternal || !strings.Contains(err.Error(), "ref") || strings.Contains(err.Error(), "secret") {
		t.Errorf("fail.plain: got %v, want INTERNAL_ERROR with a ref and no detail", err)
	}
	if err := c.Call(ctx, "echo", func() {}, nil); err == nil {
		t.Error("unmarshalable payload: got nil, want an error")
	}
}

func TestClientConcurrentCalls(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, ServerConfig{MaxInFlight: 64}, newToy())
	c := dialClient(t, ClientConfig{URL: url, Token: goodToken})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			var got struct{ N int }
			if err := c.Call(ctx, "echo", map[string]int{"n": i}, &got); err != nil {
				errs <- err
			} else if got.N != i {
				errs <- fmt.Errorf("call %d: got n=%d, want %d", i, got.N, i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClientUnauthorized(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, ServerConfig{}, newToy())
	_, err := Dial(testCtx(t), ClientConfig{URL: url, Token: "bad"})
	if !IsUnauthorized(err) {
		t.Errorf("Dial with bad token: got %v, want IsUnauthorized", err)
	}
	_, err = Dial(testCtx(t), ClientConfig{URL: "ws://127.0.0.1:1/ws", Token: goodToken})
	if err == nil || IsUnauthorized(err) {
		t.Errorf("Dial to closed port: got %v, want a non-auth error", err)
	}
}

func TestClientNotificationsInOrder(t *testing.T) {
	t.Parallel()
	s, url := startServer(t, ServerConfig{}, newToy())
	got := make(chan string, 100)
	c := dialClient(t, ClientConfig{URL: url, Token: goodToken, OnNotification: func(action string, p json.RawMessage) {
		got <- action + string(p)
	}})
	if err := c.Call(testCtx(t), kanban.ActionSubscribe, map[string][]string{"topics": {"t"}}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		s.Publish("t", "task.updated", i)
	}
	for i := range 20 {
		if g, want := <-got, fmt.Sprintf("task.updated%d", i); g != want {
			t.Fatalf("notification %d: got %s, want %s", i, g, want)
		}
	}
}

func TestClientConnectionLostWhileWaiting(t *testing.T) {
	t.Parallel()
	d := newToy()
	conns := make(chan *Conn, 1)
	_, url := startServer(t, ServerConfig{OnConnect: func(c *Conn) { conns <- c }}, d)
	c := dialClient(t, ClientConfig{URL: url, Token: goodToken})
	sc := <-conns
	errc := make(chan error, 1)
	go func() { errc <- c.Call(testCtx(t), "block", nil, nil) }()
	<-d.started
	sc.Close()
	if err := <-errc; kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Errorf("Call across a drop: got %v, want UNAVAILABLE", err)
	}
	if err := c.Call(testCtx(t), "echo", nil, nil); kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Errorf("Call after drop without Reconnect: got %v, want UNAVAILABLE", err)
	}
}

// flakyHandler answers 503 while down, else serves next.
type flakyHandler struct {
	down atomic.Bool
	next http.Handler
}

func (h *flakyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	h.next.ServeHTTP(w, r)
}

func TestClientReconnects(t *testing.T) {
	t.Parallel()
	conns := make(chan *Conn, 4)
	s := NewServer(ServerConfig{Authenticate: authenticate, Dispatch: newToy().dispatch, OnConnect: func(c *Conn) { conns <- c }})
	h := &flakyHandler{next: s}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(s.Close)

	connects := make(chan struct{}, 4)
	disconnects := make(chan error, 4)
	c := dialClient(t, ClientConfig{
		URL: "ws" + strings.TrimPrefix(ts.URL, "http"), Token: goodToken, Reconnect: true,
		OnConnect:    func(context.Context, *Client) { connects <- struct{}{} },
		OnDisconnect: func(err error) { disconnects <- err },
	})
	<-connects
	h.down.Store(true)
	(<-conns).Close()
	if err := <-disconnects; err == nil {
		t.Error("OnDisconnect: got nil, want the cause")
	}
	// The server refuses new connections now, so the client is between
	// attempts (or inside one that will fail): a call must fail fast.
	if c.Connected() {
		t.Fatal("Connected during outage: got true, want false")
	}
	if err := c.Call(testCtx(t), "echo", nil, nil); kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Errorf("Call during outage: got %v, want UNAVAILABLE", err)
	}
	h.down.Store(false)
	<-connects
	<-conns
	var got map[string]bool
	if err := c.Call(testCtx(t), "echo", map[string]bool{"back": true}, &got); err != nil || !got["back"] {
		t.Errorf("Call after reconnect: got %v, %v; want back=true, nil", got, err)
	}
}

func TestClientCloseIsClean(t *testing.T) { // not parallel: counts goroutines
	base := runtime.NumGoroutine()
	d := newToy()
	s := NewServer(ServerConfig{Authenticate: authenticate, Dispatch: d.dispatch})
	ts := httptest.NewServer(s)
	url := "ws" + strings.TrimPrefix(ts.URL, "http")
	notes := make(chan string, 1)
	c, err := Dial(testCtx(t), ClientConfig{URL: url, Token: goodToken, Reconnect: true,
		OnNotification: func(a string, _ json.RawMessage) { notes <- a }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(testCtx(t), kanban.ActionSubscribe, map[string][]string{"topics": {"x"}}, nil); err != nil {
		t.Fatal(err)
	}
	s.Publish("x", "hello", nil)
	if got := <-notes; got != "hello" {
		t.Errorf("notification: got %s, want hello", got)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Call(testCtx(t), "block", nil, nil) }()
	<-d.started
	if err := c.Close(); err != nil {
		t.Errorf("Close: got %v, want nil", err)
	}
	if err := <-errc; kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Errorf("Call in flight at Close: got %v, want UNAVAILABLE", err)
	}
	if c.Connected() {
		t.Error("Connected after Close: got true, want false")
	}
	if err := c.Call(testCtx(t), "echo", nil, nil); err == nil {
		t.Error("Call after Close: got nil, want an error")
	}
	s.Close()
	ts.Close()
	waitGoroutines(t, base)
}
