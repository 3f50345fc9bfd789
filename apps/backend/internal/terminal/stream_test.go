//go:build linux

package terminal

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// serve is m's terminal protocol on a loopback WebSocket; task "gone"
// has no working directory.
func serve(t *testing.T, m *Manager) string {
	t.Helper()
	dir := t.TempDir()
	resolve := func(_ context.Context, taskID string) (string, error) {
		if taskID == "gone" {
			return "", kanban.Errorf(kanban.CodeNotFound, "task not found")
		}
		return dir, nil
	}
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		m.Serve(r.Context(), c, resolve)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// wsClient is one client connection.
type wsClient struct {
	t    *testing.T
	c    *websocket.Conn
	text []map[string]any
	out  strings.Builder
}

func dial(t *testing.T, url string, hello string) *wsClient {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = c.Close() })
	if err := c.WriteMessage(websocket.TextMessage, []byte(hello)); err != nil {
		t.Fatal(err)
	}
	return &wsClient{t: t, c: c}
}

// until reads until the output contains want or a text message of type
// kind arrives (kind ""), within a bounded wait; it returns the text
// messages seen.
func (w *wsClient) until(want, kind string) {
	w.t.Helper()
	_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if want != "" && strings.Contains(w.out.String(), want) {
			return
		}
		for _, m := range w.text {
			if kind != "" && m["type"] == kind {
				return
			}
		}
		typ, b, err := w.c.ReadMessage()
		if err != nil {
			w.t.Fatalf("read: %v (output %q, messages %v), want %q / %q", err, w.out.String(), w.text, want, kind)
		}
		if typ == websocket.BinaryMessage {
			w.out.Write(b)
			continue
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		w.text = append(w.text, m)
	}
}

func (w *wsClient) input(s string) {
	w.t.Helper()
	if err := w.c.WriteMessage(websocket.BinaryMessage, []byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

// TestStreamOpenTypeResizeExit: a client opens a shell, types, resizes,
// and sees the shell's exit.
func TestStreamOpenTypeResizeExit(t *testing.T) {
	t.Parallel()
	url := serve(t, newManager(t, Config{}))
	w := dial(t, url, `{"type":"open","task_id":"t1","cols":90,"rows":20}`)
	w.until("", "ready")
	w.input("echo hello-$((6*7)); stty size\n")
	w.until("20 90", "")
	if !strings.Contains(w.out.String(), "hello-42") {
		t.Fatalf("output: got %q, want hello-42", w.out.String())
	}
	_ = w.c.WriteMessage(websocket.TextMessage, []byte(`{"type":"resize","cols":120,"rows":40}`))
	w.input("stty size\n")
	w.until("40 120", "")
	w.input("exit 7\n")
	w.until("", "exit")
	last := w.text[len(w.text)-1]
	if last["type"] != "exit" || last["code"] != float64(7) {
		t.Fatalf("end: got %v, want exit code 7", last)
	}
}

// TestStreamRefusals: a bad first message, a task without a directory,
// an unknown terminal and a bad control are refused without echoing
// what was sent.
func TestStreamRefusals(t *testing.T) {
	t.Parallel()
	url := serve(t, newManager(t, Config{}))
	for _, c := range []struct{ hello, code string }{
		{`{"type":"open","task_id":"t1","cols":80,"rows":24,"shell":"/bin/evil"}`, "BAD_REQUEST"},
		{`{"type":"run","task_id":"t1","cols":80,"rows":24}`, "BAD_REQUEST"},
		{`not json SECRET`, "BAD_REQUEST"},
		{`{"type":"open","task_id":"gone","cols":80,"rows":24}`, "NOT_FOUND"},
		{`{"type":"attach","task_id":"t1","terminal_id":"SECRET-ID","cols":80,"rows":24}`, "NOT_FOUND"},
		{`{"type":"open","task_id":"t1","cols":9999,"rows":24}`, "VALIDATION_ERROR"},
	} {
		w := dial(t, url, c.hello)
		w.until("", "error")
		got := w.text[0]
		if got["code"] != c.code || strings.Contains(got["message"].(string), "SECRET") || strings.Contains(got["message"].(string), "evil") {
			t.Errorf("%s: got %v, want code %s and no echo", c.hello, got, c.code)
		}
	}
	w := dial(t, url, `{"type":"open","task_id":"t1","cols":80,"rows":24}`)
	w.until("", "ready")
	_ = w.c.WriteMessage(websocket.TextMessage, []byte(`{"type":"resize","cols":0,"rows":0,"x":"SECRET"}`))
	w.until("", "error")
	if m := w.text[1]; m["code"] != "BAD_REQUEST" || strings.Contains(m["message"].(string), "SECRET") {
		t.Fatalf("bad control: got %v, want BAD_REQUEST without an echo", m)
	}
}

// TestStreamReattach: a client that left can reattach within the grace
// period and gets what the shell wrote meanwhile; a second client takes
// the terminal over from the first.
func TestStreamReattach(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{Grace: time.Minute})
	url := serve(t, m)
	w := dial(t, url, `{"type":"open","task_id":"t1","cols":80,"rows":24}`)
	w.until("", "ready")
	id := w.text[0]["terminal_id"].(string)
	w.input("sleep 0.2; echo while-$((1+1))-away\n")
	_ = w.c.Close()
	time.Sleep(500 * time.Millisecond) // the shell writes while no client is attached
	again := dial(t, url, `{"type":"attach","task_id":"t1","terminal_id":"`+id+`","cols":80,"rows":24}`)
	again.until("while-2-away", "")
	third := dial(t, url, `{"type":"attach","task_id":"t1","terminal_id":"`+id+`","cols":80,"rows":24}`)
	third.until("", "ready")
	again.until("", "error")
	if again.text[len(again.text)-1]["code"] != "CONFLICT" || m.Count("t1") != 1 {
		t.Fatalf("taken over: got %v with %d shells, want CONFLICT and one shell", again.text, m.Count("t1"))
	}
	other := dial(t, url, `{"type":"attach","task_id":"t2","terminal_id":"`+id+`","cols":80,"rows":24}`)
	other.until("", "error")
	if other.text[0]["code"] != "NOT_FOUND" {
		t.Fatalf("another task's terminal: got %v, want NOT_FOUND", other.text)
	}
}
