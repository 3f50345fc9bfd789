package forge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/google/go-github/v93/github"
)

// Bounds of the conditional-request cache.
const (
	maxCached     = 1024    // responses kept
	maxCachedBody = 4 << 20 // a larger response is not kept
)

// notModifiedHeader marks a response served from the cache after a 304;
// bodilessHeader marks a 304 to a caller's validator (Validators) for
// which no body is cached here: its body is empty.
const (
	notModifiedHeader = "X-Kandev-Not-Modified"
	bodilessHeader    = "X-Kandev-Bodiless"
)

// conditional is an http.RoundTripper that makes GETs conditional: it
// keeps the last 200 response with an ETag per URL (and Accept), sends
// If-None-Match with it, and turns a 304 back into that response (marked
// with notModifiedHeader, and with the 304's rate-limit headers). A forge
// does not count a 304 against the rate limit.
type conditional struct {
	next http.RoundTripper

	mu      sync.Mutex
	entries map[string]*cachedResponse
	order   []string // insertion order, for eviction
}

type cachedResponse struct {
	etag   string
	header http.Header
	body   []byte
}

func newConditional(next http.RoundTripper) *conditional {
	if next == nil {
		next = http.DefaultTransport
	}
	return &conditional{next: next, entries: map[string]*cachedResponse{}}
}

func (c *conditional) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, off := req.Context().Value(noCacheKey{}).(bool); off || req.Method != http.MethodGet || req.Header.Get("Range") != "" {
		return c.next.RoundTrip(req)
	}
	key := req.URL.String() + "\x00" + req.Header.Get("Accept")
	vals, seed := validatorsOf(req.Context())
	vkey := req.URL.RequestURI()
	c.mu.Lock()
	hit := c.entries[key]
	c.mu.Unlock()
	// The ETag sent: the last one this client read, or — when the caller
	// keeps its own (Validators) — the caller's, so that a 304 means
	// "unchanged since the read the caller recorded", not since a read
	// whose result it dropped.
	sent := ""
	switch {
	case vals != nil && seed:
		sent = vals.known(vkey)
	case vals == nil && hit != nil:
		sent = hit.etag
	}
	if hit != nil && hit.etag != sent {
		hit = nil // its body is not what the caller last saw
	}
	if sent != "" {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", sent)
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && sent != "":
		_ = resp.Body.Close()
		h, body := http.Header{}, []byte(nil)
		if hit != nil {
			h, body = hit.header.Clone(), hit.body
		} else {
			h.Set(bodilessHeader, "1")
		}
		vals.record(vkey, sent)
		for k, v := range resp.Header { // fresh rate-limit headers, ETag
			h[k] = v
		}
		h.Set(notModifiedHeader, "1")
		return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
			Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: resp.Request}, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		vals.record(vkey, resp.Header.Get("ETag"))
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxCachedBody+1))
		if err != nil {
			_ = resp.Body.Close()
			return nil, err
		}
		if len(body) > maxCachedBody { // not kept: the caller reads all of it
			resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
			return resp, nil
		}
		_ = resp.Body.Close()
		c.store(key, &cachedResponse{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: body})
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	return resp, nil
}

func (c *conditional) store(key string, e *cachedResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		c.order = append(c.order, key)
	}
	c.entries[key] = e
	for len(c.order) > maxCached {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
}

// notModified reports whether go-github's response came from the cache
// after a 304.
func notModified(r *github.Response) bool {
	return r != nil && r.Response != nil && r.Header.Get(notModifiedHeader) != ""
}

// bodiless reports whether go-github's response is a 304 to a caller's
// validator with nothing cached here: it decoded to an empty value.
func bodiless(r *github.Response) bool {
	return r != nil && r.Response != nil && r.Header.Get(bodilessHeader) != ""
}

type readCloser struct {
	io.Reader
	io.Closer
}

type noCacheKey struct{}

// withoutCache makes the reads made with ctx unconditional and uncached
// (a log: large, read once).
func withoutCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, noCacheKey{}, true)
}
