package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// protocolVersion is the MCP version the load clients negotiate.
const protocolVersion = "2025-11-25"

// newHTTPClient returns a keep-alive client sized for the largest load.
func newHTTPClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        conns * 2,
			MaxIdleConnsPerHost: conns * 2,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
	}
}

// session is one MCP client session over Streamable HTTP, with raw POSTs:
// no SDK, so the load generator costs the same for every server. One
// session makes one call at a time.
type session struct {
	hc      *http.Client
	url     string
	token   string
	id      string
	nextID  int
	scratch []byte
}

// openSession initializes a session (initialize, then
// notifications/initialized).
func openSession(ctx context.Context, hc *http.Client, url, token string) (*session, error) {
	s := &session{hc: hc, url: url, token: token}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocolVersion +
		`","capabilities":{},"clientInfo":{"name":"kandev-bench","version":"1"}}}`
	body, hdr, err := s.post(ctx, []byte(init))
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if !bytes.Contains(body, []byte(`"result"`)) {
		return nil, fmt.Errorf("initialize: unexpected response %.200s", body)
	}
	s.id = hdr.Get("Mcp-Session-Id")
	if _, _, err := s.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return s, nil
}

// callBody builds a tools/call request with the next id.
func (s *session) callBody(tool string, args json.RawMessage) []byte {
	s.nextID++
	b := s.scratch[:0]
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(s.nextID), 10)
	b = append(b, `,"method":"tools/call","params":{"name":"`...)
	b = append(b, tool...)
	b = append(b, `","arguments":`...)
	b = append(b, args...)
	b = append(b, "}}"...)
	s.scratch = b
	return b
}

// errToolError marks a call answered with isError or a JSON-RPC error.
var errToolError = errors.New("tool error")

// call makes one tools/call and returns the response body (for SSE, the
// whole stream). A tool error or JSON-RPC error is errToolError.
func (s *session) call(ctx context.Context, tool string, args json.RawMessage) ([]byte, error) {
	body, _, err := s.post(ctx, s.callBody(tool, args))
	if err != nil {
		return nil, err
	}
	if bytes.Contains(body, []byte(`"isError":true`)) || bytes.Contains(body, []byte(`"error":{`)) {
		return body, fmt.Errorf("%w: %.300s", errToolError, body)
	}
	return body, nil
}

func (s *session) post(ctx context.Context, body []byte) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return nil, nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, out)
	}
	return out, resp.Header, nil
}

// structured extracts result.structuredContent from a tools/call response
// (plain JSON or an SSE stream whose last data line is the response).
func structured(body []byte) (json.RawMessage, error) {
	msg := body
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("event:")) || bytes.HasPrefix(bytes.TrimSpace(body), []byte("id:")) ||
		bytes.HasPrefix(bytes.TrimSpace(body), []byte("data:")) {
		msg = nil
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				msg = d
			}
		}
	}
	var r struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &r); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if len(r.Result.StructuredContent) == 0 {
		return nil, errors.New("response has no structuredContent")
	}
	return r.Result.StructuredContent, nil
}
