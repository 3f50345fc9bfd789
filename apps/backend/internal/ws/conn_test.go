package ws

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestOversizeMessageCloses1009(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, ServerConfig{}, newToy()) // default 1 MiB limit
	c := dialRaw(t, url, goodToken)
	// 8 MiB overflows the socket buffers: the server must read out the rest
	// (not reset the connection) for the client to finish writing and see 1009.
	big := `{"id":"big","type":"request","action":"echo","payload":"` + strings.Repeat("x", 8<<20) + `"}`
	writeJSON(t, c, big)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("read after oversize: got %v, want close 1009", err)
	}
}

func TestLongRequestDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	d := newToy()
	_, url := startServer(t, ServerConfig{}, d)
	c := dialRaw(t, url, goodToken)
	writeJSON(t, c, `{"id":"slow","type":"request","action":"block"}`)
	<-d.started
	echoOK(t, c)
	close(d.release)
	if m := readMsg(t, c); m.ID != "slow" || m.Type != TypeResponse {
		t.Fatalf("got %+v, want the slow response", m)
	}
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	d := newToy()
	_, url := startServer(t, ServerConfig{MaxInFlight: 2}, d)
	c := dialRaw(t, url, goodToken)
	writeJSON(t, c, `{"id":"b1","type":"request","action":"block"}`)
	writeJSON(t, c, `{"id":"b2","type":"request","action":"block"}`)
	<-d.started
	<-d.started
	writeJSON(t, c, `{"id":"b3","type":"request","action":"echo"}`)
	m := readMsg(t, c)
	if p := errPayload(t, m); m.ID != "b3" || p.Code != kanban.CodeUnavailable || p.Message != "too many in-flight requests" {
		t.Fatalf("got id=%q %s %q, want b3 UNAVAILABLE too many in-flight requests", m.ID, p.Code, p.Message)
	}
	close(d.release)
	got := map[string]bool{readMsg(t, c).ID: true, readMsg(t, c).ID: true}
	if !got["b1"] || !got["b2"] {
		t.Fatalf("responses: got %v, want b1 and b2", got)
	}
	echoOK(t, c) // slots were released
}

func TestSlowConsumerIsClosed(t *testing.T) {
	t.Parallel()
	conns := make(chan *Conn, 1)
	gone := make(chan *Conn, 1)
	s, url := startServer(t, ServerConfig{
		SendBuffer:   4,
		OnConnect:    func(c *Conn) { c.Subscribe("firehose"); conns <- c },
		OnDisconnect: func(c *Conn) { gone <- c },
	}, newToy())
	dialRaw(t, url, goodToken) // never reads
	sc := <-conns
	big := strings.Repeat("y", 64<<10)
	for i := 0; sc.Context().Err() == nil; i++ {
		if i > 100_000 {
			t.Fatal("slow consumer: got still connected after 100000 messages, want closed")
		}
		s.Publish("firehose", "task.updated", big)
	}
	if got := <-gone; got != sc {
		t.Errorf("OnDisconnect: got conn %s, want %s", got.ID(), sc.ID())
	}
}
