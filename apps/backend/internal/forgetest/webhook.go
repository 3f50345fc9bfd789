package forgetest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// webhookDocURL names GitHub's webhook description inside the compiler
// (nothing is fetched: the loader refuses every scheme).
const webhookDocURL = "https://kandev.invalid/openapi-webhooks.json"

// Webhooks checks webhook payloads against GitHub's official webhook
// schemas (@octokit/openapi-webhooks, from tests/forge), so the payloads a
// test feeds Kandev are ones GitHub documents.
type Webhooks struct {
	raw     map[string]json.RawMessage // the document's components.examples
	schemas map[string]any             // components.schemas, decoded

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// LoadWebhooks reads GitHub's webhook description (ErrNotInstalled when
// tests/forge is not installed).
func LoadWebhooks() (*Webhooks, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@octokit", "openapi-webhooks", "generated", "api.github.com.json"))
	if err != nil {
		return nil, ErrNotInstalled
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("GitHub's webhook description: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(webhookDocURL, doc); err != nil {
		return nil, err
	}
	var parts struct {
		Components struct {
			Examples map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"examples"`
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return nil, err
	}
	w := &Webhooks{raw: map[string]json.RawMessage{}, schemas: parts.Components.Schemas, compiler: c, compiled: map[string]*jsonschema.Schema{}}
	for k, v := range parts.Components.Examples {
		w.raw[k] = v.Value
	}
	return w, nil
}

// Check validates payload against the schema of a webhook (its name in
// the description: "pull-request-opened", "check-run-completed", …).
func (w *Webhooks) Check(name string, payload []byte) error {
	w.mu.Lock()
	s, ok := w.compiled[name]
	if !ok {
		var err error
		s, err = w.compiler.Compile(webhookDocURL + "#/components/schemas/webhook-" + name)
		if err != nil {
			w.mu.Unlock()
			return fmt.Errorf("no schema for webhook %q: %w", name, err)
		}
		w.compiled[name] = s
	}
	w.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// Example returns the description's own example payload of a webhook
// (GitHub documents a few: "check-run-completed", "ping", …).
func (w *Webhooks) Example(name string) ([]byte, error) {
	b, ok := w.raw[name]
	if !ok {
		return nil, errors.New("no example for webhook " + name)
	}
	return b, nil
}

// Sign returns the X-Hub-Signature-256 header GitHub sends with body.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
