package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// inSection is a selector under the Settings › Workspaces section of the
// workspace named name (found by its heading).
func inSection(b *tab, name string) string {
	b.t.Helper()
	var id string
	b.js(fmt.Sprintf(`([...document.querySelectorAll('section[data-workspace]')].find((s) => s.querySelector('h2').firstChild.textContent === %q) || {dataset: {}}).dataset.workspace || ''`, name), &id)
	if id == "" {
		b.t.Fatalf("no section for the workspace %q", name)
	}
	return fmt.Sprintf(`section[data-workspace=%q]`, id)
}

// fieldError is the text shown next to the named field of a form.
func fieldError(b *tab, form, name string) string {
	b.t.Helper()
	return b.str(fmt.Sprintf(`(() => { const w = [...document.querySelectorAll(%q)].find((x) => x.dataset.field === %q);
		const e = w && w.querySelector('.field-error'); return e && !e.hidden ? e.textContent : ''; })()`, form+" [data-field]", name))
}

// TestBoardWorkspacesAndRepositories: Settings › Workspaces creates a
// workspace (which the board's workspace picker then offers), renames it,
// registers a repository in it from a local checkout inside the source
// roots and changes its default branch. A local path Kandev protects is
// refused next to the field, with the rule and not the path, and nothing
// is written; an empty name is refused next to the name.
func TestBoardWorkspacesAndRepositories(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e)
	b.signIn()
	b.open("#/config/workspaces", "config")
	b.set("#config > form [name=name]", "Second space")
	b.set("#config > form [name=description]", "For the side project")
	b.click("#config > form button.primary")
	b.until("the new workspace's section", `[...document.querySelectorAll('section[data-workspace] > h2')].some((x) => x.textContent === 'Second space')`)
	if n := dbStr(e, `SELECT COUNT(*) FROM workspaces WHERE name = 'Second space' AND description = 'For the side project'`); n != "1" {
		t.Fatalf("%s workspaces named Second space, want 1", n)
	}
	sec := inSection(b, "Second space")
	wsID := dbStr(e, `SELECT id FROM workspaces WHERE name = 'Second space'`)

	before := e.fingerprint()
	b.set(sec+" [data-edit=workspace] [name=name]", "")
	b.click(sec + " [data-edit=workspace] button.primary")
	b.until("the name's refusal", fmt.Sprintf(`[...document.querySelectorAll('%s [data-edit=workspace] [data-field=name] .field-error')].some((p) => !p.hidden && p.textContent)`, sec))
	if after := e.fingerprint(); after != before {
		t.Fatalf("a refused rename changed the database:\nbefore %s\nafter %s", before, after)
	}
	b.set(sec+" [data-edit=workspace] [name=name]", "Side project")
	b.click(sec + " [data-edit=workspace] button.primary")
	b.until("the renamed section", `[...document.querySelectorAll('section[data-workspace] > h2')].some((x) => x.textContent === 'Side project')`)
	sec = inSection(b, "Side project")

	registerRepository(b, sec, wsID)

	b.open("#/", "board")
	var options []string
	b.js(`[...document.querySelectorAll('#pick-workspace option')].map((o) => o.textContent)`, &options)
	if !strings.Contains(strings.Join(options, "|"), "Side project") {
		t.Fatalf("the board's workspace picker offers %v, want the new workspace too", options)
	}
}

// registerRepository registers a repository in the workspace of section
// sec (id wsID) from Settings › Workspaces after two refused local paths,
// then changes its default branch.
func registerRepository(b *tab, sec, wsID string) {
	t, e := b.t, b.e
	t.Helper()
	reg := sec + " [data-edit=repository]"
	before := e.fingerprint()
	b.set(reg+" [name=local_path]", "/etc")
	b.click(reg + " button.primary")
	b.until("the local path's refusal", fmt.Sprintf(`document.querySelector('%s [data-field=local_path] .field-error:not([hidden])')`, reg))
	msg := fieldError(b, reg, "local_path")
	if !strings.Contains(msg, "a path Kandev protects") || strings.Contains(msg, "/etc") {
		t.Errorf("the refusal of /etc reads %q, want the rule without the path", msg)
	}
	missing := filepath.Join(t.TempDir(), "nowhere")
	b.set(reg+" [name=local_path]", missing)
	b.click(reg + " button.primary")
	b.until("the missing path's refusal", fmt.Sprintf(`(document.querySelector('%s [data-field=local_path] .field-error:not([hidden])') || {}).textContent?.includes('existing directory')`, reg))
	if msg := fieldError(b, reg, "local_path"); strings.Contains(msg, missing) || strings.Contains(msg, "nowhere") {
		t.Errorf("the refusal of a missing path reads %q: it names the path", msg)
	}
	if after := e.fingerprint(); after != before {
		t.Fatalf("refused edits changed the database:\nbefore %s\nafter %s", before, after)
	}

	checkout := t.TempDir()
	b.set(reg+" [name=name]", "project")
	b.set(reg+" [name=local_path]", checkout)
	b.set(reg+" [name=default_branch]", "trunk")
	b.click(reg + " button.primary")
	b.until("the repository's row", fmt.Sprintf(`[...document.querySelectorAll('%s [data-repository] strong')].some((s) => s.textContent === 'project')`, sec))
	if got := dbStr(e, `SELECT local_path || ' ' || default_branch FROM repositories WHERE workspace_id = ? AND name = 'project'`, wsID); got != checkout+" trunk" {
		t.Fatalf("the registered repository: got %q, want %q", got, checkout+" trunk")
	}
	repoID := dbStr(e, `SELECT id FROM repositories WHERE name = 'project'`)
	row := fmt.Sprintf(`[data-repository=%q]`, repoID)
	b.set(row+" [name=default_branch]", "develop")
	b.click(row + " button.primary")
	b.until("the new default branch", fmt.Sprintf(`(document.querySelector('%s .badge') || {}).textContent === 'Branch develop'`, row))
	if got := dbStr(e, `SELECT default_branch FROM repositories WHERE id = ?`, repoID); got != "develop" {
		t.Fatalf("default branch %q, want develop", got)
	}

}
