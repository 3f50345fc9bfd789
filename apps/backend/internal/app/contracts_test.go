package app

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestActionContracts pins which payload contract each action has: the
// compiled input schema of the named tool (on every transport), or the
// strict decoder. A change of an action's contract shows in the diff.
func TestActionContracts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cat, err := catalog.New()
	if err != nil {
		t.Fatal(err)
	}
	tools := contractTools(e.b.reg, cat)
	var b strings.Builder
	for _, name := range e.b.reg.Names() {
		a, _ := e.b.reg.Lookup(name)
		contract := "strict decoder"
		if tool, ok := tools[name]; ok {
			contract = "schema of " + tool.Name
		}
		if got, want := e.b.reg.HasContract(name), contract != "strict decoder"; got != want {
			t.Errorf("%s: got contract set %v, want %v", name, got, want)
		}
		fmt.Fprintf(&b, "%-32s %-44s %s\n", name, contract, strings.Join(a.Fields(), ","))
	}
	path := filepath.Join("testdata", "action_contracts.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path) //nolint:gosec // a fixed test path
	if err != nil {
		t.Fatalf("read %s (run with -update): %v", path, err)
	}
	if b.String() != string(want) {
		t.Errorf("action contracts changed (run go test ./internal/app -run TestActionContracts -update):\ngot:\n%swant:\n%s", b.String(), want)
	}
}
