package app

import (
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardProfilesScopedToWorkspace: the create-task dialog offers the
// agent and executor profiles the current workspace's tasks may use (the
// global ones and its own), never another workspace's, which the settings
// pages badge with their workspace.
func TestBoardProfilesScopedToWorkspace(t *testing.T) {
	e := newEnv(t)
	mine := scopedAgentProfile(e, e.sessionMCP(kanban.ModeConfig, ""), "delegate-here")
	theirs := scopedAgentProfile(e, e.sessionMCP(kanban.ModeConfig, foreignTask(e).ID), "delegate-there")
	b := newTab(t, e)
	b.signIn()
	b.click("#new-task")
	b.until("the dialog", `document.querySelector('#create-task [name=agent_profile_id]')`)
	offered := func(id string) bool {
		var ok bool
		b.js(fmt.Sprintf(`[...document.querySelectorAll('#create-task [name=agent_profile_id] option')].some((o) => o.value === %q)`, id), &ok)
		return ok
	}
	if !offered(mine.ID) || offered(theirs.ID) {
		t.Fatalf("create-task profiles: this workspace's offered %v, the other's offered %v; want true, false", offered(mine.ID), offered(theirs.ID))
	}
	b.open("#/config/agents", "config")
	b.until("the profiles", fmt.Sprintf(`document.querySelector('[data-profile=%q]')`, theirs.ID))
	badge := func(id string) string {
		return b.str(fmt.Sprintf(`[...document.querySelectorAll('[data-profile=%q] .badge')].map((x) => x.textContent).join('|')`, id))
	}
	if got := badge(theirs.ID); got != "Workspace Elsewhere" {
		t.Fatalf("the other workspace's profile badges: got %q, want %q", got, "Workspace Elsewhere")
	}
	if got := badge(mine.ID); got != "Workspace Default" {
		t.Fatalf("this workspace's profile badges: got %q", got)
	}
}
