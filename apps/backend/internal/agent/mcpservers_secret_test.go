package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A profile server's "secret:NAME" values are replaced by the secret's
// value in what the agent is given (a copy: the stored map keeps the
// reference); a missing secret drops the server with a reason that names
// the variable and the secret, never a value.
func TestMCPServerSecretsResolved(t *testing.T) {
	secrets := map[string]string{"API": "the-api-value-123"}
	m := &Manager{cfg: Config{Secret: func(_ context.Context, ref string) (string, error) {
		name, _ := kanban.SecretRef(ref)
		if v, ok := secrets[name]; ok {
			return v, nil
		}
		return "", kanban.NotFound("secret")
	}}}
	env := map[string]string{"TOKEN": "secret:API", "PLAIN": "secret:not a name"}
	hs, got, err := m.withSecrets(context.Background(), map[string]string{"X-Team": "a"}, env)
	if err != nil || got["TOKEN"] != "the-api-value-123" || got["PLAIN"] != "secret:not a name" || hs["X-Team"] != "a" {
		t.Fatalf("got %v %v %v, want TOKEN resolved, the malformed reference kept", hs, got, err)
	}
	if env["TOKEN"] != "secret:API" {
		t.Error("the stored environment was changed, want a copy resolved")
	}
	_, _, err = m.withSecrets(context.Background(), map[string]string{"Authorization": "secret:GONE"}, nil)
	if err == nil || !strings.Contains(err.Error(), "header Authorization refers to secret GONE") || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Errorf("missing secret: got %v, want the header and the secret named", err)
	}
	none := &Manager{}
	if _, _, err := none.withSecrets(context.Background(), nil, map[string]string{"K": "secret:API"}); err == nil {
		t.Error("no secrets configured: got the reference passed on, want the server dropped")
	}
}
