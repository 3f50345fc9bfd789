package remote

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// forwardDial bounds the local dial of each forwarded connection.
const forwardDial = 10 * time.Second

// Forwarder copies each connection a listener accepts to a new
// connection to a local address (the backend's), until Close.
type Forwarder struct {
	ctx    context.Context
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Forward serves ln, forwarding to target (host:port) until Close; ctx
// bounds the dials (its end closes no connection: Close does).
func Forward(ctx context.Context, ln net.Listener, target string) *Forwarder {
	f := &Forwarder{ctx: context.WithoutCancel(ctx), ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	return f
}

func (f *Forwarder) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.pipe(c)
		}()
	}
}

func (f *Forwarder) pipe(in net.Conn) {
	ctx, cancel := context.WithTimeout(f.ctx, forwardDial)
	var d net.Dialer
	out, err := d.DialContext(ctx, "tcp", f.target)
	cancel()
	if err != nil {
		_ = in.Close()
		return
	}
	if !f.track(in, out) {
		return
	}
	defer f.untrack(in, out)
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(out, in)
	go cp(in, out)
	<-done
	<-done
}

func (f *Forwarder) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *Forwarder) untrack(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
		delete(f.conns, c)
	}
}

// Close stops forwarding: the listener (and the host's forward) closed,
// every forwarded connection closed; it returns once all are done.
func (f *Forwarder) Close() {
	f.mu.Lock()
	f.closed = true
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	_ = f.ln.Close()
	f.wg.Wait()
}
