package gate

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"
)

// readErrorMessage is the text sent when a POST body cannot be read.
const readErrorMessage = "parse error: could not read request body"

// BodyTimeout bounds how long a POST body may take to arrive once its
// headers are in: a client that trickles its body is answered and
// disconnected then, instead of holding a goroutine and its buffer.
const BodyTimeout = 30 * time.Second

// bodyTimeout is BodyTimeout, shortened by tests.
var bodyTimeout = BodyTimeout

// initialBodyBuffer caps the buffer allocated up front from a request's
// Content-Length; it grows as bytes actually arrive.
const initialBodyBuffer = 64 << 10

// HTTP wraps next (mcp-go's Streamable HTTP or SSE message handler) with the
// gate. Only POST bodies are checked; other methods pass through untouched.
// The body is read with a MaxMessageBytes cap; an accepted body is handed to
// next as a fresh reader over the same bytes. A rejected one never reaches
// next: the response is the JSON-RPC error with status 400 (413 when too
// large), also for notifications, since an HTTP request always gets an answer.
func HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxMessageBytes {
			writeError(w, newError(failTooLarge, nil, false))
			return
		}
		// Not every ResponseWriter supports deadlines (tests' recorders);
		// those bodies are bounded by size only, as before.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		body, err := readBody(w, r)
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeError(w, newError(failTooLarge, nil, false))
				return
			}
			e := newError(failSyntax, nil, false)
			e.Message = readErrorMessage
			writeError(w, e)
			return
		}
		if e := Check(body); e != nil {
			writeError(w, e)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(body)), nil
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads at most MaxMessageBytes of the body; a longer body fails
// with *http.MaxBytesError once MaxMessageBytes+1 bytes were read (and
// net/http then closes the connection instead of draining the rest). The
// buffer never grows beyond MaxMessageBytes+1 bytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	size := 512
	if r.ContentLength > 0 {
		size = int(min(r.ContentLength, initialBodyBuffer)) + 1 // +1: see EOF without growing
	}
	buf := make([]byte, 0, size)
	body := http.MaxBytesReader(w, r.Body, MaxMessageBytes)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(2*cap(buf), MaxMessageBytes+1)-len(buf))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func writeError(w http.ResponseWriter, e *RPCError) {
	body := e.Response()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.HTTPStatus)
	if _, err := w.Write(body); err != nil {
		return // the client is gone; net/http closes the connection
	}
}
