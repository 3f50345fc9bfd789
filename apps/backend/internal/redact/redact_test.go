package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestKnownValues(t *testing.T) {
	r := New(EnvSecrets([]string{"OPENAI_API_KEY=sk-secret-123", "PATH=/usr/bin", "SHORT_TOKEN=abc", "GH_TOKEN=ghp_abcdef"})...)
	got := r.String("key sk-secret-123 gh ghp_abcdef path /usr/bin abc")
	if want := "key [redacted] gh [redacted] path /usr/bin abc"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := New("secret-one", "secret-one-longer").String("x secret-one-longer y"); got != "x [redacted] y" {
		t.Fatalf("overlapping secrets: got %q, want the longer one replaced whole", got)
	}
}

func TestShapes(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer abc.def-ghi", "Authorization: [redacted]"},
		{`header="Authorization: Basic dXNlcjpwYXNz"`, `header="Authorization: [redacted]"`},
		{"curl -H 'authorization=tok123'", "curl -H 'authorization=[redacted]'"},
		{"sent bearer eyJhbGciOi.x_y", "sent bearer [redacted]"},
		{"ANTHROPIC_API_KEY=sk-ant-xyz other=1", "ANTHROPIC_API_KEY=[redacted] other=1"},
		{"--api-key=abc123 --model=x", "--api-key=[redacted] --model=x"},
		{`token: "quoted"`, `token: "[redacted]"`},
		{`{"api_token":"v1","name":"n"}`, `{"api_token":"[redacted]","name":"n"}`},
		{"session " + hex64 + " done", "session [redacted] done"},
		{"commit 0123456789abcdef0123456789abcdef01234567", "commit 0123456789abcdef0123456789abcdef01234567"},
		{"id 8c1f5f0e-3b3c-4d2e-9a51-1f2e3d4c5b6a", "id 8c1f5f0e-3b3c-4d2e-9a51-1f2e3d4c5b6a"},
		{"dsn postgres://app:pa55w0rd@db:5432/x ok", "dsn postgres://app:[redacted]@db:5432/x ok"},
		{"see https://example.com/a:b@c", "see https://example.com/a:b@c"},
		{"plain text stays", "plain text stays"},
	} {
		if got := New().String(tc.in); got != tc.want {
			t.Errorf("String(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestJSONStaysValid: redacting JSON text never breaks it.
func TestJSONStaysValid(t *testing.T) {
	doc := map[string]any{"line": `level=INFO msg=call Authorization="Bearer abc" api_key=xyz`, "hex": strings.Repeat("ab", 40),
		"nested": []string{`token=a"b`, `secret:c\d`}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	out := New("xyz").Bytes(b)
	if !json.Valid(out) {
		t.Fatalf("redacted JSON is invalid: %s", out)
	}
	for _, leak := range []string{"abc", "xyz", strings.Repeat("ab", 40)} {
		if strings.Contains(string(out), leak) {
			t.Fatalf("got %s, which still holds %q", out, leak)
		}
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{"ANTHROPIC_API_KEY": true, "x-auth-token": true, "Authorization": true,
		"db_password": true, "PATH": false, "HOME": false, "Content-Type": false} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q): got %v, want %v", name, got, want)
		}
	}
}

// TestWithPaths: an absolute path, and every path under it, becomes its
// label, the longest first; the secrets are still redacted.
func TestWithPaths(t *testing.T) {
	r := New("s3cr3t-value").WithPaths(map[string]string{"/srv/kandev": "<data dir>", "/home/op": "~", "/": "root", "rel": "x"})
	got := r.String(`{"dir":"/srv/kandev/tasks/1","home":"/home/op/.cache","k":"s3cr3t-value","other":"/srv/kandevx"}`)
	want := `{"dir":"<data dir>/tasks/1","home":"~/.cache","k":"[redacted]","other":"<data dir>x"}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
