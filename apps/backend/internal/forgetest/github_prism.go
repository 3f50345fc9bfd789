package forgetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// prismAnswer is Prism's response to a forwarded request.
type prismAnswer struct {
	status            int
	header            http.Header
	body              []byte
	template          any // the decoded body when valid JSON
	requestViolations []string
}

func (a *prismAnswer) write(w http.ResponseWriter) {
	for _, k := range []string{"Content-Type", "Location"} {
		if v := a.header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body) //nolint:gosec // G705: Prism's JSON answer to a test client, not a page
}

// maxPrismTries bounds the retries of a valid request whose randomly
// generated response Prism itself found invalid (its generator sometimes
// misses a oneOf): that is Prism's problem, not the client's.
const maxPrismTries = 5

func (g *GitHub) forward(r *http.Request, body []byte) (*prismAnswer, error) {
	var last *prismAnswer
	for range maxPrismTries {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, g.prism.URL+r.URL.RequestURI(), bytes.NewReader(body)) //nolint:gosec // G704: always to the loopback Prism
		if err != nil {
			return nil, err
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Accept", "application/json") // the description declares only application/json
		if a := r.Header.Get("Authorization"); a != "" {
			req.Header.Set("Authorization", a)
		}
		resp, err := g.client.Do(req) //nolint:gosec // G704: as above
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		a := &prismAnswer{status: resp.StatusCode, header: resp.Header, body: b}
		a.requestViolations = requestViolations(resp.Header.Get("sl-violations"), b)
		if len(a.requestViolations) > 0 {
			return a, nil
		}
		if resp.StatusCode < 500 {
			_ = json.Unmarshal(b, &a.template)
			return a, nil
		}
		last = a
	}
	return last, nil // only Prism's own response generation failed: answer from state
}

// violationEntry is one of Prism's validation results.
type violationEntry struct {
	Location []any `json:"location"`
	Message  string
}

// requestViolations returns Prism's complaints about the request (not the
// ones about its own generated response): from the sl-violations header
// or a Prism problem document.
func requestViolations(header string, body []byte) []string {
	var entries []violationEntry
	if header != "" {
		_ = json.Unmarshal([]byte(header), &entries)
	}
	var problem struct {
		Type       string           `json:"type"`
		Detail     string           `json:"detail"`
		Validation []violationEntry `json:"validation"`
	}
	if json.Unmarshal(body, &problem) == nil && strings.HasPrefix(problem.Type, "https://stoplight.io/prism/errors#") {
		entries = append(entries, problem.Validation...)
		switch {
		case strings.HasSuffix(problem.Type, "#NO_PATH_MATCHED_ERROR"), strings.HasSuffix(problem.Type, "#NO_METHOD_MATCHED_ERROR"):
			return []string{"no such endpoint in GitHub's API (" + problem.Type + ")"}
		case strings.HasSuffix(problem.Type, "#NOT_ACCEPTABLE"), strings.HasSuffix(problem.Type, "#UNSUPPORTED_MEDIA_TYPE"):
			return []string{problem.Detail}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		if len(e.Location) > 0 && fmt.Sprint(e.Location[0]) == "response" {
			continue
		}
		if !seen[e.Message] {
			seen[e.Message] = true
			out = append(out, e.Message)
		}
	}
	return out
}
