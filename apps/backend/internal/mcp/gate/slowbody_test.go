package gate

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHTTPSlowBody is the regression test for POST bodies that trickle in
// (a byte a second): the gate waited for them forever, holding a goroutine
// and its buffer per connection. Now a body that has not arrived within
// the body timeout is answered 400 and the connection closed, and next is
// never called.
func TestHTTPSlowBody(t *testing.T) {
	old := bodyTimeout
	bodyTimeout = 300 * time.Millisecond
	defer func() { bodyTimeout = old }()
	called := make(chan struct{}, 1)
	srv := httptest.NewServer(HTTP(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called <- struct{}{} })))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, _ = fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 4<<20)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("got %v, want a response within the body timeout", err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), readErrorMessage) {
		t.Fatalf("got %d %s, want 400 %q", resp.StatusCode, b, readErrorMessage)
	}
	select {
	case <-called:
		t.Fatal("next was called for a body that never arrived")
	default:
	}
}
