package app

import (
	"os"
	"testing"
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
}
