package action

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
	"github.com/kandev/kandev/apps/backend/internal/vault"
)

func TestSecretActions(t *testing.T) {
	h := newHarness(t)
	key, err := vault.ParseKey(vault.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New()
	sec, err := vault.Open(context.Background(), key, h.st, red)
	if err != nil {
		t.Fatal(err)
	}
	h.reg, _ = mustNew(t, Deps{Store: h.st, Publisher: h.pub, FS: testPolicy(t), Secrets: sec, Redactor: func() *redact.Redactor { return red }})
	const canary = "ghp_CANARY_5f1e2d3c4b5a"
	var seen strings.Builder
	seen.WriteString(mustJSON(t, call[kanban.SecretInfo](h, operator, kanban.ActionSecretSet, map[string]any{"name": "GH_TOKEN", "value": canary})))
	seen.WriteString(mustJSON(t, call[kanban.SecretInfo](h, operator, kanban.ActionSecretSet, map[string]any{"name": "GH_TOKEN", "value": canary + "v2"})))
	list := call[kanban.List[kanban.SecretInfo]](h, operator, kanban.ActionSecretList, map[string]any{})
	seen.WriteString(mustJSON(t, list))
	if len(list.Items) != 1 || list.Items[0].Masked != kanban.SecretMask || list.Items[0].Size != len(canary)+2 {
		t.Fatalf("list: got %+v, want GH_TOKEN masked, of its size", list.Items)
	}
	seen.WriteString(mustJSON(t, h.auditList(AuditListIn{})))
	var stored string
	if err := h.st.DB().QueryRow(`SELECT sealed FROM secrets`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	seen.WriteString(stored)
	if strings.Contains(seen.String(), "CANARY") {
		t.Errorf("a secret's value appears in a response, the audit log or the stored row:\n%s", seen.String())
	}
	if got := red.String("token " + canary + "v2 leaked"); strings.Contains(got, "CANARY") {
		t.Errorf("redactor: got %q, want the value redacted", got)
	}
	if v, err := sec.Resolve(context.Background(), "secret:GH_TOKEN"); err != nil || v != canary+"v2" {
		t.Errorf("resolve: got %q, %v, want the latest value", v, err)
	}
	sess := h.session(h.task("Agent"), kanban.ModeConfig)
	h.refuse(sess, kanban.ActionSecretList, map[string]any{}, kanban.CodeForbidden)
	h.refuse(operator, kanban.ActionSecretSet, map[string]any{"name": "bad name", "value": "x"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionSecretDelete, map[string]any{"name": "MISSING"}, kanban.CodeNotFound)
	call[SecretDeleted](h, operator, kanban.ActionSecretDelete, map[string]any{"name": "GH_TOKEN"})
	if _, err := sec.Resolve(context.Background(), "secret:GH_TOKEN"); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Errorf("resolve a deleted secret: got %v, want NOT_FOUND", err)
	}
}
