package app

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
)

// TestWebhookSecretRotation: over real HTTP to a running backend, the
// webhook secrets of the forges file are read again when their files
// change: after an operator rotates a secret file (renamed over, as
// secret managers do, or rewritten in place), deliveries signed with the
// new secret are taken (202) and the old one is refused (401), with no
// restart; while the file is missing deliveries get 503 and the answer
// echoes neither secret.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gh, gl, conf := filepath.Join(dir, "github-hook"), filepath.Join(dir, "gitlab-hook"), filepath.Join(dir, "forges.json")
	writeFile(t, gh, "whsec_before_0123456789\n")
	writeFile(t, gl, "gltok_before_0123456789\n")
	writeFile(t, conf, `{"webhooks":{"github":{"token_file":"`+gh+`"},"gitlab":{"token_file":"`+gl+`"}}}`)
	e := newEnvWith(t, func(c *Config) { c.ForgesFile = conf })
	github, gitlab := webhookPosters(t, e.url)
	expect := func(what string, got int, want int) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %d, want %d", what, got, want)
		}
	}
	c, _ := github("whsec_before_0123456789")
	expect("github, the first secret", c, http.StatusAccepted)
	c, _ = gitlab("gltok_before_0123456789")
	expect("gitlab, the first secret", c, http.StatusAccepted)

	// GitHub's file renamed over (a new file of the same size), GitLab's
	// rewritten in place.
	writeFile(t, gh+".new", "whsec_rotated_987654321\n")
	if err := os.Rename(gh+".new", gh); err != nil {
		t.Fatal(err)
	}
	writeFile(t, gl, "gltok_rotated_and_longer_987654321\n")
	c, _ = github("whsec_before_0123456789")
	expect("github, the old secret after rotation", c, http.StatusUnauthorized)
	c, _ = github("whsec_rotated_987654321")
	expect("github, the rotated secret", c, http.StatusAccepted)
	c, _ = gitlab("gltok_before_0123456789")
	expect("gitlab, the old token after rotation", c, http.StatusUnauthorized)
	c, _ = gitlab("gltok_rotated_and_longer_987654321")
	expect("gitlab, the rotated token", c, http.StatusAccepted)

	if err := os.Remove(gh); err != nil {
		t.Fatal(err)
	}
	c, text := github("whsec_rotated_987654321")
	expect("github, the secret file missing", c, http.StatusServiceUnavailable)
	if strings.Contains(text, "whsec_") || strings.Contains(text, gh) {
		t.Fatalf("the refusal echoes the secret or its path: %q", text)
	}
	writeFile(t, gh, "whsec_restored_000000000\n")
	c, _ = github("whsec_restored_000000000")
	expect("github, the secret file restored", c, http.StatusAccepted)
	if strings.Contains(e.logs.String(), "whsec_") || strings.Contains(e.logs.String(), "gltok_") {
		t.Fatal("a webhook secret reached the log")
	}
}

// webhookPosters return functions posting a ping delivery signed with a
// secret (GitHub) or carrying a token (GitLab) to the backend at url,
// with the answer's status and (bounded) text.
func webhookPosters(t *testing.T, url string) (github, gitlab func(string) (int, string)) {
	body := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	post := func(path string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(b)
	}
	github = func(secret string) (int, string) {
		return post("/webhooks/github", map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": forgetest.Sign(secret, body)})
	}
	gitlab = func(token string) (int, string) {
		return post("/webhooks/gitlab", map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": token})
	}
	return github, gitlab
}
