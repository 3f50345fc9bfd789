package app

import (
	"os"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardShowsAgentDetection: the agents settings page shows each
// agent type's detection: the mock agent installed with its version, a
// missing one with the command that installs it.
func TestBoardShowsAgentDetection(t *testing.T) {
	e := newAgentEnv(t)
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir()) // nothing installed but the kandev binary
	e.detectAll(true)
	if err := os.Setenv("PATH", path); err != nil { // the browser needs it; the detection stays cached
		t.Fatal(err)
	}
	b := newTab(t, e)
	b.signIn()
	b.open("#/config/agents", "config")
	b.until("the mock agent's detection", `document.querySelector('section[data-agent="mock-agent"] .agent-detect .badge')?.textContent === 'Installed'`)
	if got := b.str(`document.querySelector('section[data-agent="mock-agent"] .agent-detect').textContent`); got != "Installed version 1" {
		t.Fatalf("mock agent: %q", got)
	}
	b.until("codex's detection", `document.querySelector('section[data-agent="codex"] .agent-detect .badge')?.textContent === 'Not installed'`)
	if got := b.str(`document.querySelector('section[data-agent="codex"] .install').textContent`); got != "npm install -g @openai/codex @agentclientprotocol/codex-acp" {
		t.Fatalf("codex install hint: %q", got)
	}
	if got := b.str(`document.querySelector('section[data-agent="gemini"] .agent-detect').textContent`); got == "" {
		t.Fatal("gemini has no detection shown")
	}

	// Once a session offered models, the page lists them and its model
	// fields suggest them.
	task, sid := e.startMock("models", "@say hi", nil)
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "hi")
	b.open("#/inbox", "inbox")
	b.open("#/config/agents", "config")
	b.until("the mock agent's models", `document.querySelector('section[data-agent="mock-agent"] .models')?.textContent === 'Models offered: mock-fast, mock-smart'`)
	if got := b.str(`[...document.querySelectorAll('#models-mock-agent option')].map((o) => o.value).join(',') + '|' + document.querySelector('section[data-agent="mock-agent"] input[name=model]').getAttribute('list')`); got != "mock-fast,mock-smart|models-mock-agent" {
		t.Fatalf("model suggestions: %q", got)
	}
}
