package ws

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Timing defaults shared by server and client.
const (
	defaultPingInterval = 20 * time.Second
	defaultPongWait     = 60 * time.Second
	defaultWriteWait    = 10 * time.Second
	// closeGrace bounds how long a closing side waits for the peer to
	// answer its close frame before dropping the TCP connection.
	closeGrace = time.Second
	// drainIdle ends the drain after an oversize message once the peer has
	// been quiet this long; WriteWait caps the whole drain.
	drainIdle = 500 * time.Millisecond
)

var (
	// errSlowConsumer is the cause recorded when an outbound queue overflows.
	errSlowConsumer = errors.New("slow consumer: outbound queue full")
	// errLinkClosed reports a frame that could not be queued on a closed link.
	errLinkClosed = errors.New("connection closed")
)

// linkConfig holds the per-connection limits of a link.
type linkConfig struct {
	readLimit    int64
	pingInterval time.Duration
	pongWait     time.Duration
	writeWait    time.Duration
	sendBuffer   int
}

// link is the transport shared by server and client connections: one
// reader (the caller of readLoop), one writer goroutine fed by send, pings,
// read deadlines renewed on pongs and messages, and close on the first
// error. Only the writer goroutine writes data frames.
type link struct {
	ws  *websocket.Conn
	cfg linkConfig

	send       chan []byte
	done       chan struct{} // closed once closing starts
	readerDone chan struct{}
	writerDone chan struct{}

	// onClose, if set before the link starts, runs once when closing starts.
	onClose func()

	// draining is set by the reader before closing when it reads out an
	// oversize message; the writer then drops the connection only after
	// the reader returns.
	draining atomic.Bool

	closeOnce   sync.Once
	closeCode   int // close frame to send; 0 = none
	closeReason string
	cause       error // why the link closed; read after done
}

func newLink(conn *websocket.Conn, cfg linkConfig) *link {
	return &link{
		ws:         conn,
		cfg:        cfg,
		send:       make(chan []byte, cfg.sendBuffer),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// close starts closing the link: the writer sends a close frame with code
// (none when 0), waits briefly for the peer, and drops the connection. Only
// the first call has an effect.
func (l *link) close(code int, reason string, cause error) {
	l.closeOnce.Do(func() {
		l.closeCode, l.closeReason, l.cause = code, reason, cause
		close(l.done)
		if l.onClose != nil {
			l.onClose()
		}
	})
}

// abort closes the link and drops the TCP connection at once, unblocking a
// writer stuck on a peer that does not read.
func (l *link) abort(cause error) {
	l.close(0, "", cause)
	// Closing twice only reports "use of closed connection"; nothing to do.
	_ = l.ws.Close()
}

// err returns why the link closed. Valid once done is closed.
func (l *link) err() error {
	<-l.done
	return l.cause
}

// enqueue queues a frame without blocking. It reports false when the link
// is closed or its queue is full; a full queue aborts the link.
func (l *link) enqueue(b []byte) bool {
	select {
	case <-l.done:
		return false
	default:
	}
	select {
	case l.send <- b:
		return true
	default:
		l.abort(errSlowConsumer)
		return false
	}
}

// enqueueWait queues a frame, waiting for room until ctx ends. It returns
// errLinkClosed once the link is closed.
func (l *link) enqueueWait(ctx context.Context, b []byte) error {
	select {
	case <-l.done:
		return errLinkClosed
	default:
	}
	select {
	case l.send <- b:
		return nil
	case <-l.done:
		return errLinkClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeLoop is the only goroutine that writes data frames and pings.
func (l *link) writeLoop() {
	defer close(l.writerDone)
	ping := time.NewTicker(l.cfg.pingInterval)
	defer ping.Stop()
	for {
		select {
		case b := <-l.send:
			if err := l.write(b); err != nil {
				l.abort(err)
				return
			}
		case <-ping.C:
			if err := l.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(l.cfg.writeWait)); err != nil {
				l.abort(err)
				return
			}
		case <-l.done:
			l.finish()
			return
		}
	}
}

// finish flushes queued frames and sends the close frame on a graceful
// close (closeCode set) and gives the peer a moment to answer, or lets the
// reader finish draining, then drops the connection.
func (l *link) finish() {
	if l.closeCode != 0 && l.flush() {
		msg := websocket.FormatCloseMessage(l.closeCode, l.closeReason)
		if err := l.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(l.cfg.writeWait)); err == nil {
			t := time.NewTimer(closeGrace)
			select {
			case <-l.readerDone:
			case <-t.C:
			}
			t.Stop()
		}
	} else if l.draining.Load() {
		<-l.readerDone
	}
	// The connection may already be closed by abort; that error says nothing new.
	_ = l.ws.Close()
}

// write writes one text frame within WriteWait.
func (l *link) write(b []byte) error {
	if err := l.ws.SetWriteDeadline(time.Now().Add(l.cfg.writeWait)); err != nil {
		return err
	}
	return l.ws.WriteMessage(websocket.TextMessage, b)
}

// flush writes the frames still queued; it reports false on a write error.
func (l *link) flush() bool {
	for {
		select {
		case b := <-l.send:
			if l.write(b) != nil {
				return false
			}
		default:
			return true
		}
	}
}

// readLoop reads text frames and hands each to handle, on the calling
// goroutine, until the first error, then closes the link and returns. A
// non-text frame is passed with isText false.
func (l *link) readLoop(handle func(data []byte, isText bool)) {
	defer close(l.readerDone)
	l.ws.SetReadLimit(l.cfg.readLimit)
	renew := func() error { return l.ws.SetReadDeadline(time.Now().Add(l.cfg.pongWait)) }
	l.ws.SetPongHandler(func(string) error { return renew() })
	if err := renew(); err != nil {
		l.close(0, "", err)
		return
	}
	for {
		mt, data, err := l.ws.ReadMessage()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				// gorilla already sent close 1009; read out the rest of the
				// message so our TCP close is not a reset that could make
				// the peer lose that close frame.
				l.draining.Store(true)
				l.close(0, "", err)
				l.drain()
				return
			}
			l.close(0, "", err)
			return
		}
		if err := renew(); err != nil {
			l.close(0, "", err)
			return
		}
		handle(data, mt == websocket.TextMessage)
	}
}

// drain discards inbound bytes until the peer is quiet or WriteWait ends.
func (l *link) drain() {
	nc := l.ws.NetConn()
	end := time.Now().Add(l.cfg.writeWait)
	buf := make([]byte, 32<<10)
	for time.Now().Before(end) {
		deadline := time.Now().Add(drainIdle)
		if deadline.After(end) {
			deadline = end
		}
		if err := nc.SetReadDeadline(deadline); err != nil {
			return
		}
		if _, err := nc.Read(buf); err != nil {
			return // EOF, idle timeout or reset: nothing more to drain
		}
	}
}

// wait blocks until both the reader and the writer have returned.
func (l *link) wait() {
	<-l.readerDone
	<-l.writerDone
}
