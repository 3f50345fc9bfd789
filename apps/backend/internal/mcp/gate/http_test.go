package gate

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sized returns a valid tools/call request of exactly n bytes.
func sized(n int) string {
	head, tail := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":"`, `"}}}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

// goodCall is a valid tools/call request.
var goodCall = call("1", `{"name":"t","arguments":{"a":1}}`)

// httpCases are requests to HTTP's gate: passed to the next handler
// untouched, or refused with a status and a JSON-RPC reply.
var httpCases = []struct {
	name     string
	method   string
	body     string
	chunked  bool  // hide the length so only the read cap can catch it
	declared int64 // Content-Length to declare instead of the real one
	status   int
	reply    string // response body when rejected
}{
	{name: "accepted", method: "POST", body: goodCall, status: 200},
	{name: "accepted at the size limit", method: "POST", body: sized(MaxMessageBytes), status: 200},
	{name: "accepted chunked", method: "POST", body: goodCall, chunked: true, status: 200},
	{name: "GET passes untouched", method: "GET", body: "", status: 200},
	{name: "DELETE passes untouched", method: "DELETE", body: "not json", status: 200},
	{name: "duplicate key", method: "POST", body: call("3", `{"name":"t","name":"u"}`), status: 400,
		reply: `{"jsonrpc":"2.0","id":3,"error":{"code":-32700,"message":"parse error: duplicate object key"}}`},
	{name: "notification still answered", method: "POST", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"Name":"t"}}`, status: 400,
		reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"invalid params: tools/call params allow only name, arguments, _meta"}}`},
	{name: "batch", method: "POST", body: "[" + goodCall + "]", status: 400,
		reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batch requests are not supported"}}`},
	{name: "empty body", method: "POST", body: "", status: 400,
		reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: empty message"}}`},
	{name: "one byte over the limit", method: "POST", body: sized(MaxMessageBytes + 1), status: 413,
		reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"request too large: limit is 4194304 bytes"}}`},
	{name: "over the limit chunked", method: "POST", body: sized(MaxMessageBytes + 1), chunked: true, status: 413,
		reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"request too large: limit is 4194304 bytes"}}`},
	{name: "declared over the limit", method: "POST", body: goodCall, declared: MaxMessageBytes + 1, status: 413,
		reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"request too large: limit is 4194304 bytes"}}`},
}

func TestHTTP(t *testing.T) {
	for _, tt := range httpCases {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var gotBody []byte
			var gotLength int64
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				gotLength = r.ContentLength
				var err error
				if gotBody, err = io.ReadAll(r.Body); err != nil {
					t.Errorf("read body in next: %v", err)
				}
				w.WriteHeader(http.StatusOK)
			})
			req := httptest.NewRequest(tt.method, "/mcp", strings.NewReader(tt.body))
			if tt.chunked {
				req.ContentLength = -1
			}
			if tt.declared != 0 {
				req.ContentLength = tt.declared
			}
			rec := httptest.NewRecorder()
			HTTP(next).ServeHTTP(rec, req)

			if rec.Code != tt.status {
				t.Errorf("got status %d, want %d", rec.Code, tt.status)
			}
			if tt.reply != "" {
				if calls != 0 {
					t.Errorf("got %d calls of next, want 0", calls)
				}
				if got := rec.Body.String(); got != tt.reply {
					t.Errorf("got body %s, want %s", got, tt.reply)
				}
				if got := rec.Header().Get("Content-Type"); got != "application/json" {
					t.Errorf("got Content-Type %q, want application/json", got)
				}
				return
			}
			if calls != 1 {
				t.Fatalf("got %d calls of next, want 1", calls)
			}
			if !bytes.Equal(gotBody, []byte(tt.body)) {
				t.Errorf("got body of %d bytes in next, want the identical %d bytes", len(gotBody), len(tt.body))
			}
			if tt.method == "POST" && gotLength != int64(len(tt.body)) {
				t.Errorf("got ContentLength %d, want %d", gotLength, len(tt.body))
			}
		})
	}
}

// TestHTTPServer runs the gate behind a real server, where MaxBytesReader
// also closes the connection after an oversized body.
func TestHTTPServer(t *testing.T) {
	var calls int
	srv := httptest.NewServer(HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if _, err := io.Copy(w, r.Body); err != nil {
			t.Errorf("copy body: %v", err)
		}
	})))
	defer srv.Close()
	for _, tt := range []struct {
		body   string
		status int
	}{
		{call("1", `{"name":"t"}`), 200},
		{sized(MaxMessageBytes+1) + strings.Repeat(" ", 1<<20), 413},
		{call("1", `{"name":"t","Name":"t"}`), 400},
	} {
		// io.MultiReader hides the length, so the body is sent chunked.
		resp, err := http.Post(srv.URL, "application/json", io.MultiReader(strings.NewReader(tt.body)))
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatalf("read response: %v", err)
		}
		if resp.StatusCode != tt.status {
			t.Errorf("got status %d, want %d (%s)", resp.StatusCode, tt.status, got)
		}
		if tt.status == 200 && string(got) != tt.body {
			t.Errorf("got echoed body %q, want %q", got, tt.body)
		}
	}
	if calls != 1 {
		t.Errorf("got %d calls of next, want 1", calls)
	}
}
