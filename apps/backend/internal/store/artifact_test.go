package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestPlanLifecycle(t *testing.T) {
	bothEngines(t, testPlanLifecycle)
}

func testPlanLifecycle(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	id := f.task.ID
	p, err := f.s.CreatePlan(ctx, kanban.Plan{TaskID: id, Title: "Plan", Content: "v1", CreatedBy: "agent"})
	if err != nil {
		t.Fatalf("create plan: %v", err)
	}
	if p.Revision != 1 || p.Content != "v1" || p.CreatedBy != "agent" {
		t.Fatalf("got %+v, want revision 1 with content v1 by agent", p)
	}
	before := snapshot(t, f.s)
	_, err = f.s.CreatePlan(ctx, kanban.Plan{TaskID: id, Content: "again"})
	wantCode(t, err, kanban.CodeConflict)
	checkSnapshot(t, f.s, before)

	p, err = f.s.UpdatePlan(ctx, id, nil, "v2", "user")
	if err != nil {
		t.Fatalf("update plan: %v", err)
	}
	if p.Revision != 2 || p.Title != "Plan" || p.Content != "v2" || p.CreatedBy != "agent" {
		t.Fatalf("got %+v, want revision 2, title kept, content v2, creator kept", p)
	}
	title := "Renamed"
	if p, err = f.s.UpdatePlan(ctx, id, &title, "v3", "agent"); err != nil || p.Title != title || p.Revision != 3 {
		t.Fatalf("got %+v, %v, want revision 3 titled %q", p, err, title)
	}
	got, err := f.s.GetPlan(ctx, id)
	if err != nil || got.Content != "v3" {
		t.Fatalf("got %+v, %v, want content v3", got, err)
	}

	if revs, want := planRevisions(t, f.s, id), []string{"v3", "v2", "v1"}; !slices.Equal(revs, want) {
		t.Fatalf("got revisions %v, want %v", revs, want)
	}

	if err := f.s.DeletePlan(ctx, id); err != nil {
		t.Fatalf("delete plan: %v", err)
	}
	if n := countRows(t, f.s, "task_plan_revisions"); n != 0 {
		t.Fatalf("got %d revisions after delete, want 0", n)
	}
	_, err = f.s.GetPlan(ctx, id)
	wantCode(t, err, kanban.CodeNotFound)
	wantCode(t, f.s.DeletePlan(ctx, id), kanban.CodeNotFound)
	_, err = f.s.UpdatePlan(ctx, id, nil, "v4", "")
	wantCode(t, err, kanban.CodeNotFound)
	if p, err = f.s.CreatePlan(ctx, kanban.Plan{TaskID: id, Content: "fresh"}); err != nil || p.Revision != 1 {
		t.Fatalf("got %+v, %v after re-creating, want revision 1", p, err)
	}
}

// planRevisions is the contents of task id's plan revisions, newest
// first, read two per page (five pages at most).
func planRevisions(t *testing.T, s *Store, id string) []string {
	t.Helper()
	var revs []string
	pg := kanban.Page{Limit: 2}
	for range 5 {
		l, err := s.ListPlanRevisions(context.Background(), id, pg)
		if err != nil {
			t.Fatalf("list revisions: %v", err)
		}
		for _, r := range l.Items {
			revs = append(revs, r.Content)
		}
		if pg.Cursor = l.NextCursor; pg.Cursor == "" {
			break
		}
	}
	return revs
}

func TestPlanRejects(t *testing.T) {
	bothEngines(t, testPlanRejects)
}

func testPlanRejects(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	if _, err := f.s.CreatePlan(ctx, kanban.Plan{TaskID: f.task.ID, Content: "v1"}); err != nil {
		t.Fatalf("create plan: %v", err)
	}
	other := mustTask(t, f.s, f.b, "", "Other")
	long := strings.Repeat("t", 201)
	tests := []refusal{
		{"create without content", func() error {
			_, err := f.s.CreatePlan(ctx, kanban.Plan{TaskID: other.ID})
			return err
		}, kanban.CodeValidation},
		{"create with long title", func() error {
			_, err := f.s.CreatePlan(ctx, kanban.Plan{TaskID: other.ID, Title: long, Content: "x"})
			return err
		}, kanban.CodeValidation},
		{"create with content over the limit", func() error {
			_, err := f.s.CreatePlan(ctx, kanban.Plan{TaskID: other.ID, Content: strings.Repeat("x", kanban.MaxContentLen+1)})
			return err
		}, kanban.CodeValidation},
		{"create on unknown task", func() error {
			_, err := f.s.CreatePlan(ctx, kanban.Plan{TaskID: kanban.NewID(), Content: "x"})
			return err
		}, kanban.CodeNotFound},
		{"update without content", func() error {
			_, err := f.s.UpdatePlan(ctx, f.task.ID, nil, "", "")
			return err
		}, kanban.CodeValidation},
		{"update with long title", func() error {
			_, err := f.s.UpdatePlan(ctx, f.task.ID, &long, "x", "")
			return err
		}, kanban.CodeValidation},
		{"revisions of unknown task", func() error {
			_, err := f.s.ListPlanRevisions(ctx, kanban.NewID(), kanban.Page{})
			return err
		}, kanban.CodeNotFound},
		{"revisions with bad cursor", func() error {
			_, err := f.s.ListPlanRevisions(ctx, f.task.ID, kanban.Page{Cursor: encodeCursor(planRevisionListing.what, "x")})
			return err
		}, kanban.CodeValidation},
	}
	checkRefusals(t, f.s, tests)
}

func TestWriteDocument(t *testing.T) {
	bothEngines(t, testWriteDocument)
}

func testWriteDocument(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	d, err := f.s.WriteDocument(ctx, kanban.Document{TaskID: f.task.ID, Key: "notes.md", Title: "Notes", Content: "one"})
	if err != nil {
		t.Fatalf("write document: %v", err)
	}
	if d.Revision != 1 || d.Type != "markdown" || d.Title != "Notes" {
		t.Fatalf("got %+v, want revision 1 of type markdown titled Notes", d)
	}
	if d, err = f.s.WriteDocument(ctx, kanban.Document{TaskID: f.task.ID, Key: "notes.md", Content: "two"}); err != nil {
		t.Fatalf("revise document: %v", err)
	}
	if d.Revision != 2 || d.Type != "markdown" || d.Title != "Notes" || d.Content != "two" {
		t.Fatalf("got %+v, want revision 2 keeping type and title with content two", d)
	}
	if d, err = f.s.WriteDocument(ctx, kanban.Document{TaskID: f.task.ID, Key: "notes.md", Type: "text", Content: "3"}); err != nil || d.Type != "text" {
		t.Fatalf("got %+v, %v, want type text", d, err)
	}
	if n := countRows(t, f.s, "task_document_revisions"); n != 3 {
		t.Fatalf("got %d revision rows, want 3", n)
	}
	got, err := f.s.GetDocument(ctx, f.task.ID, "notes.md")
	if err != nil || got.Content != "3" || got.Revision != 3 {
		t.Fatalf("got %+v, %v, want content 3 at revision 3", got, err)
	}
	_, err = f.s.GetDocument(ctx, f.task.ID, "missing")
	wantCode(t, err, kanban.CodeNotFound)
}

func TestWriteDocumentRejects(t *testing.T) {
	bothEngines(t, testWriteDocumentRejects)
}

func testWriteDocumentRejects(t *testing.T) {
	f := sessionFixture(t)
	ok := kanban.Document{TaskID: f.task.ID, Key: "a", Content: "x"}
	with := func(fn func(d *kanban.Document)) kanban.Document { d := ok; fn(&d); return d }
	tests := []struct {
		name string
		in   kanban.Document
		code kanban.Code
	}{
		// The key pattern, the type enum and the bounds are document.write's
		// contract's; the store holds the single-line title.
		{"two-line title", with(func(d *kanban.Document) { d.Title = "a\nb" }), kanban.CodeValidation},
		{"unknown task", with(func(d *kanban.Document) { d.TaskID = kanban.NewID() }), kanban.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.s)
			_, err := f.s.WriteDocument(context.Background(), tt.in)
			wantCode(t, err, tt.code)
			checkSnapshot(t, f.s, before)
		})
	}
	if _, err := f.s.WriteDocument(context.Background(), with(func(d *kanban.Document) { d.Key = strings.Repeat("k", 64) })); err != nil {
		t.Fatalf("got %v for a 64-character key, want success", err)
	}
}

func TestListDocuments(t *testing.T) {
	bothEngines(t, testListDocuments)
}

func testListDocuments(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	for _, k := range []string{"zeta", "alpha", "m.1", "beta"} {
		if _, err := f.s.WriteDocument(ctx, kanban.Document{TaskID: f.task.ID, Key: k, Content: "body of " + k}); err != nil {
			t.Fatalf("write %s: %v", k, err)
		}
	}
	var keys []string
	p := kanban.Page{Limit: 3}
	for range 5 {
		l, err := f.s.ListDocuments(ctx, f.task.ID, p)
		if err != nil {
			t.Fatalf("list documents: %v", err)
		}
		for _, d := range l.Items {
			if d.Content != "" {
				t.Fatalf("got content in the listing of %s, want it omitted", d.Key)
			}
			keys = append(keys, d.Key)
		}
		if p.Cursor = l.NextCursor; p.Cursor == "" {
			break
		}
	}
	if want := []string{"alpha", "beta", "m.1", "zeta"}; !slices.Equal(keys, want) {
		t.Fatalf("got keys %v, want %v", keys, want)
	}
	_, err := f.s.ListDocuments(ctx, kanban.NewID(), kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
}

func TestArtifacts(t *testing.T) {
	bothEngines(t, testArtifacts)
}

func testArtifacts(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	var (
		ids     []string
		created []time.Time
	)
	for _, data := range []string{`{"n":1}`, `{"n":2}`, `[3]`} {
		a, err := f.s.CreateArtifact(ctx, kanban.Artifact{TaskID: f.task.ID, SessionID: f.sess.ID,
			Kind: kanban.ArtifactFindings, Data: json.RawMessage(data)})
		if err != nil {
			t.Fatalf("create artifact: %v", err)
		}
		ids, created = append(ids, a.ID), append(created, a.CreatedAt)
	}
	if _, err := f.s.CreateArtifact(ctx, kanban.Artifact{TaskID: f.task.ID, Kind: kanban.ArtifactWalkthrough,
		Data: json.RawMessage(`{"steps":[]}`)}); err != nil {
		t.Fatalf("create walkthrough: %v", err)
	}
	latest, err := f.s.LatestArtifact(ctx, f.task.ID, kanban.ArtifactFindings)
	if err != nil || latest.ID != ids[2] || string(latest.Data) != `[3]` || latest.SessionID != f.sess.ID {
		t.Fatalf("got %+v, %v, want the newest findings %s", latest, err, ids[2])
	}
	_, err = f.s.LatestArtifact(ctx, f.task.ID, kanban.ArtifactDecision)
	wantCode(t, err, kanban.CodeNotFound)

	var got []string
	p := kanban.Page{Limit: 2}
	for range 5 {
		l, err := f.s.ListArtifacts(ctx, f.task.ID, kanban.ArtifactFindings, p)
		if err != nil {
			t.Fatalf("list artifacts: %v", err)
		}
		for _, a := range l.Items {
			got = append(got, a.ID)
		}
		if p.Cursor = l.NextCursor; p.Cursor == "" {
			break
		}
	}
	if want := []string{ids[2], ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want newest first %v", got, want)
	}
	if l, err := f.s.ListArtifacts(ctx, f.task.ID, "", kanban.Page{}); err != nil || len(l.Items) != 4 {
		t.Fatalf("got %v, %v listing every kind, want 4 items", l, err)
	}
	deleteFindings(t, f, ids, created)
	if c := countRows(t, f.s, "task_artifacts"); c != 1 {
		t.Fatalf("got %d artifacts left, want the walkthrough only", c)
	}
}

// deleteFindings deletes the fixture's findings, first those created
// before the newest (ids and created in creation order), then the rest.
func deleteFindings(t *testing.T, f *fixture, ids []string, created []time.Time) {
	t.Helper()
	ctx := context.Background()
	older := 0 // a cutoff deletes only what was created before it
	for _, c := range created {
		if c.Before(created[2]) {
			older++
		}
	}
	n, err := f.s.DeleteArtifacts(ctx, f.task.ID, kanban.ArtifactFindings, created[2])
	if err != nil || n != older {
		t.Fatalf("got %d, %v deleting before the newest, want %d", n, err, older)
	}
	if latest, err := f.s.LatestArtifact(ctx, f.task.ID, kanban.ArtifactFindings); err != nil || latest.ID != ids[2] {
		t.Fatalf("got %+v, %v after the cutoff, want the newest %s kept", latest, err, ids[2])
	}
	n, err = f.s.DeleteArtifacts(ctx, f.task.ID, kanban.ArtifactFindings, time.Time{})
	if err != nil || n != 3-older {
		t.Fatalf("got %d, %v, want %d deleted", n, err, 3-older)
	}
	if n, err = f.s.DeleteArtifacts(ctx, f.task.ID, kanban.ArtifactFindings, time.Time{}); err != nil || n != 0 {
		t.Fatalf("got %d, %v deleting again, want 0", n, err)
	}
}

func TestCreateArtifactRejects(t *testing.T) {
	bothEngines(t, testCreateArtifactRejects)
}

func testCreateArtifactRejects(t *testing.T) {
	f := sessionFixture(t)
	other := mustTask(t, f.s, f.b, "", "Other")
	ok := kanban.Artifact{TaskID: f.task.ID, Kind: kanban.ArtifactRichOutput, Data: json.RawMessage(`{}`)}
	with := func(fn func(a *kanban.Artifact)) kanban.Artifact { a := ok; fn(&a); return a }
	big := `"` + strings.Repeat("x", kanban.MaxArtifactDataBytes) + `"`
	tests := []struct {
		name string
		in   kanban.Artifact
		code kanban.Code
	}{
		{"empty data", with(func(a *kanban.Artifact) { a.Data = nil }), kanban.CodeValidation},
		{"invalid json", with(func(a *kanban.Artifact) { a.Data = json.RawMessage(`{"a":`) }), kanban.CodeValidation},
		{"data over 1 MiB", with(func(a *kanban.Artifact) { a.Data = json.RawMessage(big) }), kanban.CodeValidation},
		{"unknown task", with(func(a *kanban.Artifact) { a.TaskID = kanban.NewID() }), kanban.CodeNotFound},
		{"unknown session", with(func(a *kanban.Artifact) { a.SessionID = kanban.NewID() }), kanban.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.s)
			_, err := f.s.CreateArtifact(context.Background(), tt.in)
			wantCode(t, err, tt.code)
			checkSnapshot(t, f.s, before)
		})
	}
	ctx := context.Background()
	a, err := f.s.CreateArtifact(ctx, with(func(a *kanban.Artifact) { a.TaskID = other.ID; a.SessionID = f.sess.ID }))
	if err != nil || a.SessionID != f.sess.ID || a.TaskID != other.ID {
		t.Fatalf("got %+v, %v for a session publishing on a related task, want success", a, err)
	}
	_, err = f.s.ListArtifacts(ctx, kanban.NewID(), "", kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
}
