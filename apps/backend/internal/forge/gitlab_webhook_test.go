package forge

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestGitLabWebhookToken(t *testing.T) {
	secret := mustToken(t, webhookSecret)
	if err := VerifyGitLabToken(secret, webhookSecret); err != nil {
		t.Fatal(err)
	}
	for name, header := range map[string]string{
		"missing":     "",
		"forged":      "whsec_forged_forged_forged_forged_00",
		"prefix only": webhookSecret[:10],
		"longer":      webhookSecret + "x",
		"case":        strings.ToUpper(webhookSecret),
		"signature":   forgetest.Sign(webhookSecret, []byte(`{}`)),
	} {
		err := VerifyGitLabToken(secret, header)
		if kanban.ErrorCode(err) != kanban.CodeUnauthorized {
			t.Fatalf("%s: got %v, want UNAUTHORIZED", name, err)
		}
		if header != "" && strings.Contains(err.Error(), header) || strings.Contains(err.Error(), webhookSecret) {
			t.Fatalf("%s: error %q echoes the header or the secret", name, err)
		}
	}
	if err := VerifyGitLabToken(credential.Token{}, webhookSecret); kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Fatalf("no secret configured: got %v, want UNAVAILABLE", err)
	}
}

func TestGitLabWebhookEvents(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	note := forgetest.GitLabNote{ID: 1244, Author: "bob", Body: "rename this", Path: "src/login.go", NewLine: 12, HeadSHA: sha1, CreatedAt: at, UpdatedAt: at}
	for _, tc := range []struct {
		name, event string
		body        []byte
		want        *Event
	}{
		{"opened", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "open", sha1, "", nil),
			&Event{Kind: EventPROpened, PRs: []int{7}, HeadSHA: sha1}},
		{"pushed", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "update", sha1, sha2, nil),
			&Event{Kind: EventPRSynchronized, PRs: []int{7}, HeadSHA: sha1}},
		{"marked ready", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "update", sha1, "", map[string]any{"draft": map[string]any{"previous": true, "current": false}}),
			&Event{Kind: EventPRReady, PRs: []int{7}, HeadSHA: sha1}},
		{"made a draft", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "update", sha1, "", map[string]any{"draft": map[string]any{"previous": false, "current": true}}),
			&Event{Kind: EventPRDraft, PRs: []int{7}, HeadSHA: sha1}},
		{"reviewers", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "update", sha1, "", map[string]any{"reviewers": map[string]any{"previous": []any{}, "current": []any{}}}),
			&Event{Kind: EventReviewRequested, PRs: []int{7}, HeadSHA: sha1}},
		{"approved", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "approved", sha1, "", nil),
			&Event{Kind: EventReviewSubmitted, PRs: []int{7}, HeadSHA: sha1}},
		{"merged", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "merge", sha1, "", nil),
			&Event{Kind: EventPRMerged, PRs: []int{7}, HeadSHA: sha1}},
		{"closed", GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "close", sha1, "", nil),
			&Event{Kind: EventPRClosed, PRs: []int{7}, HeadSHA: sha1}},
		{"diff note", GitLabNoteHook, forgetest.NoteHook(glProject, 7, sha1, note),
			&Event{Kind: EventReviewComment, PRs: []int{7}, HeadSHA: sha1, Comment: &ReviewComment{ID: 1244, Author: "bob", Body: "rename this",
				Path: "src/login.go", Line: 12, Side: "RIGHT", CommitSHA: sha1, CreatedAt: at, UpdatedAt: at}}},
		{"failed pipeline", GitLabPipelineHook, forgetest.PipelineHook(glProject, 7, 31, sha1, "failed", []forgetest.GitLabStatus{
			{ID: 380, Name: "lint", Status: "failed", AllowFailure: true}, {ID: 381, Name: "test", Status: "failed"}}),
			&Event{Kind: EventCheckCompleted, PRs: []int{7}, HeadSHA: sha1, Check: &FailedCheck{ID: 381, Name: "test", Kind: "job", Conclusion: "failed", HasLog: true}}},
		{"green branch pipeline", GitLabPipelineHook, forgetest.PipelineHook(glProject, 0, 31, sha1, "success", nil),
			&Event{Kind: EventCheckCompleted, HeadSHA: sha1, Check: &FailedCheck{ID: 31, Name: "pipeline", Kind: "pipeline", Conclusion: "success",
				URL: "https://gitlab.example/" + glProject + "/-/pipelines/1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGitLabEvent(tc.event, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Repo = glRepo
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("event (-want +got):\n%s", diff)
			}
		})
	}

	checkGitLabIgnoredDeliveries(t, note)
}

// checkGitLabIgnoredDeliveries: deliveries the watcher does not act on
// give nothing (note is a diff note), and payloads that are not the
// event's JSON are refused echoing nothing.
func checkGitLabIgnoredDeliveries(t *testing.T, note forgetest.GitLabNote) {
	t.Helper()
	general := note
	general.Path = ""
	for name, d := range map[string]struct {
		event string
		body  []byte
	}{
		"push":                {"Push Hook", []byte(`{}`)},
		"a running pipeline":  {GitLabPipelineHook, forgetest.PipelineHook(glProject, 7, 31, sha1, "running", nil)},
		"a comment off diff":  {GitLabNoteHook, forgetest.NoteHook(glProject, 7, sha1, general)},
		"a title edit":        {GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "update", sha1, "", map[string]any{"title": map[string]any{}})},
		"an issue comment":    {GitLabNoteHook, []byte(`{"object_kind":"note","project":{"path_with_namespace":"a/b"},"object_attributes":{"noteable_type":"Issue"}}`)},
		"an unknown MR event": {GitLabMergeRequestHook, forgetest.MergeRequestHook(glProject, 7, "frobnicate", sha1, "", nil)},
	} {
		if ev, err := ParseGitLabEvent(d.event, d.body); ev != nil || err != nil {
			t.Fatalf("%s: got %+v, %v; want nothing", name, ev, err)
		}
	}
	for _, body := range []string{`not json`, `{"project":{"path_with_namespace":"../x"}}`, `{"project":{"path_with_namespace":"x"}}`, `[]`} {
		_, err := ParseGitLabEvent(GitLabMergeRequestHook, []byte(body))
		if kanban.ErrorCode(err) != kanban.CodeValidation || strings.Contains(err.Error(), "../x") {
			t.Fatalf("%s: got %v, want a validation error that echoes nothing", body, err)
		}
	}
}

// TestGitLabDocumentedWebhookExamples feeds the parser the example
// payloads of GitLab's webhook events page as gitlab.com/gitlab-org/api/
// client-go ships them in its testdata (the module this package builds
// on, read from the module cache).
func TestGitLabDocumentedWebhookExamples(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "gitlab.com/gitlab-org/api/client-go/v2").Output()
	dir := filepath.Join(strings.TrimSpace(string(out)), "testdata", "webhooks")
	if _, statErr := os.Stat(dir); err != nil || statErr != nil {
		t.Skipf("client-go's testdata is not in the module cache (%v, %v)", err, statErr)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name)) // #nosec G304 -- the module cache
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	project := Repo{Owner: "gitlab-org", Name: "gitlab-test"}
	ev, err := ParseGitLabEvent(GitLabMergeRequestHook, read("merge_request.json"))
	if err != nil || ev == nil || ev.Kind != EventPROpened || ev.Repo != (Repo{Owner: "gitlabhq", Name: "gitlab-test"}) || len(ev.PRs) != 1 || ev.PRs[0] != 1 || len(ev.HeadSHA) != 40 {
		t.Fatalf("merge request example: %+v, %v", ev, err)
	}
	// The note example is a comment on the merge request, not its diff.
	if ev, err := ParseGitLabEvent(GitLabNoteHook, read("note_merge_request.json")); err != nil || ev != nil {
		t.Fatalf("note example: %+v, %v; want nothing (not a diff note)", ev, err)
	}
	ev, err = ParseGitLabEvent(GitLabPipelineHook, read("pipeline.json"))
	if err != nil || ev == nil || ev.Kind != EventCheckCompleted || ev.Repo != project || ev.HeadSHA != "bcbb5ec396a2c0f828686f14fac9b80b780504f2" ||
		len(ev.PRs) != 1 || ev.PRs[0] != 1 || ev.Check == nil || ev.Check.Kind != "pipeline" || ev.Check.Conclusion != "success" {
		t.Fatalf("pipeline example: %+v (check %+v), %v", ev, ev.Check, err)
	}
}
