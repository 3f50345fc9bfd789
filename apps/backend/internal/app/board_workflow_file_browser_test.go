package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// downloadsTo makes the tab's browser save downloads in dir under the
// names the page gives them.
func (b *tab) downloadsTo(dir string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		b.t.Fatalf("download dir: %v", err)
	}
}

// downloaded waits (bounded) for a finished download named name in dir
// and returns its content.
func downloaded(t *testing.T, dir, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil && len(raw) > 0 && json.Valid(raw) {
			return raw
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no download %s in %s (has %v)", name, dir, entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// upload puts a file into the import form's file control and submits it.
func (b *tab) upload(path string) {
	b.t.Helper()
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#workflow-import input[type=file]"), []string{path}))
	b.click("#workflow-import button.primary")
}

// TestBoardWorkflowFileExportImport: Settings › Workflows downloads the
// seeded workflow as a file holding exactly workflow.export's document;
// that file, renamed inside, uploads back as a new workflow with the same
// steps and automations. A file that is not a workflow document, and one
// over the size bound (refused by the page before any request, and by the
// backend when sent anyway), are refused next to the file control with
// nothing created; a file whose workflow exists already is reported
// skipped.
func TestBoardWorkflowFileExportImport(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e)
	b.signIn()
	dir := t.TempDir()
	b.downloadsTo(dir)
	b.open("#/config/workflows", "config")
	kanbanID := workflowNamed(e, "Kanban")
	b.click(fmt.Sprintf(`section[data-workflow=%q] button.export`, kanbanID))
	raw := downloaded(t, dir, "kanban.kandev-workflow.json")
	var got, want map[string]any
	var doc action.WorkflowDocument
	e.dispatch(kanban.ActionWorkflowExport, action.WorkflowRefIn{WorkflowID: kanbanID}, &doc)
	wantRaw, _ := json.Marshal(doc)
	if json.Unmarshal(raw, &got) != nil || json.Unmarshal(wantRaw, &want) != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the downloaded file:\n%s\nwant workflow.export's document:\n%s", raw, wantRaw)
	}

	files := t.TempDir()
	write := func(name string, body []byte) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := e.fingerprint()
	b.upload(write("bad.json", []byte(`{"type":"kandev_workflow","version":1,"workflows":[{"name":"Broken","steps":[{"name":"A","colour":"red"}]}]}`)))
	b.until("the bad file's refusal", `(document.querySelector('#workflow-import [data-field=document] .field-error:not([hidden])') || {}).textContent`)
	if msg := fieldError(b, "#workflow-import", "document"); !strings.HasPrefix(msg, "document.workflows[].steps[]: unknown field") {
		t.Errorf("the bad file's refusal reads %q, want it to name the offending field", msg)
	}
	big := write("big.json", []byte(`{"pad":"`+strings.Repeat("x", kanban.MaxWorkflowDocBytes)+`"}`))
	b.upload(big)
	b.until("the big file's refusal", `(document.querySelector('#workflow-import [data-field=document] .field-error:not([hidden])') || {}).textContent?.includes('larger than')`)
	bigText, _ := os.ReadFile(big)
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionWorkflowImport, action.WorkflowImportIn{Document: string(bigText)}, nil)
	if kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Errorf("the backend took an oversized document: %v", err)
	}
	if after := e.fingerprint(); after != before {
		t.Fatalf("refused files changed the database:\nbefore %s\nafter %s", before, after)
	}

	b.upload(write("same.json", raw))
	b.until("the skipped report", `(document.getElementById('import-status') || {}).textContent?.includes('Skipped “Kanban”')`)
	renamed := strings.Replace(string(raw), `"name": "Kanban"`, `"name": "Kanban again"`, 1)
	b.upload(write("renamed.json", []byte(renamed)))
	b.until("the imported workflow's section", `[...document.querySelectorAll('section[data-workflow] > h2')].some((x) => x.textContent === 'Kanban again')`)
	var again action.WorkflowDocument
	e.dispatch(kanban.ActionWorkflowExport, action.WorkflowRefIn{WorkflowID: workflowNamed(e, "Kanban again")}, &again)
	again.Workflows[0].Name = "Kanban"
	if !reflect.DeepEqual(again.Workflows, doc.Workflows) {
		a, _ := json.Marshal(again)
		t.Fatalf("the imported workflow exports as\n%s\nwant the original\n%s", a, wantRaw)
	}
}
