package ws

import (
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// Review regression: an unknown envelope key is caller-chosen text; like
// unknown payload keys ("payload: unknown field; allowed: ...") it must
// not be echoed. Today the error is `unknown envelope field "<key>"`, so a
// secret pasted as a key comes straight back (and into client logs).
func TestReviewUnknownEnvelopeKeyNotEchoed(t *testing.T) {
	t.Parallel()
	d := newToy()
	_, url := startServer(t, ServerConfig{}, d)
	c := dialRaw(t, url, goodToken)
	frame := `{"id":"r1","type":"request","action":"echo","sk-live-CANARY123":1}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	m := readMsg(t, c)
	p := errPayload(t, m)
	if strings.Contains(p.Message, "CANARY") {
		t.Fatalf("the error echoes the unknown envelope key: %q", p.Message)
	}
}
