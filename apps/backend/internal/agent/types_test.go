package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The reference's agent types, by our names: every one has metadata.
var referenceTypes = []string{"claude-code", "codex", "copilot", "gemini", "amp", "auggie", "opencode", "cursor", "devin",
	"qwen", "droid", "iflow", "kilocode", "pi", "kimi", "kiro", "qoder", "trae", "grok", "hermes", "omp"}

func TestEveryBuiltinTypeResolves(t *testing.T) {
	t.Parallel()
	types := typeMap(BuiltinTypes())
	for _, name := range append(slices.Clone(referenceTypes), "mock-agent") {
		ty, ok := types[name]
		if !ok {
			t.Fatalf("no built-in agent type %s", name)
		}
		if ty.DisplayName == "" || ty.Command.Path == "" || ty.Install == "" || !agentNamePattern.MatchString(name) {
			t.Fatalf("%s: incomplete metadata %+v", name, ty)
		}
		switch ty.Detect() {
		case DetectACP:
			// An npm agent: npx --yes --prefer-offline PACKAGE, probed
			// with --no --offline so that a probe never downloads it.
			if ty.Package == "" || !slices.Equal(ty.Command.Args[:3], []string{"--yes", "--prefer-offline", ty.Package}) {
				t.Fatalf("%s: npx launch %v of package %q", name, ty.Command.Args, ty.Package)
			}
			if p := ty.probeCommand(); !slices.Equal(p.Args[:3], []string{"--no", "--offline", ty.Package}) || ty.Command.Args[0] != "--yes" {
				t.Fatalf("%s: probe %v (launch %v)", name, p.Args, ty.Command.Args)
			}
			if !strings.Contains(ty.Install, "install") {
				t.Fatalf("%s: install hint %q", name, ty.Install)
			}
		case DetectPath:
			if ty.Binary == "" || ty.Binary != ty.Command.Path {
				t.Fatalf("%s: native binary %q, command %q", name, ty.Binary, ty.Command.Path)
			}
		case DetectSelf:
			if name != "mock-agent" {
				t.Fatalf("%s runs the kandev binary", name)
			}
		}
	}
	if len(types) != len(referenceTypes)+1 {
		t.Fatalf("%d built-in types, want %d", len(types), len(referenceTypes)+1)
	}
}

func TestModelFlagAndVariable(t *testing.T) {
	t.Parallel()
	g := typeMap(BuiltinTypes())["gemini"]
	if got := g.launchArgs("gemini-2.5-pro"); !slices.Equal(got[len(got)-2:], []string{"--model", "gemini-2.5-pro"}) {
		t.Fatalf("gemini launch %v", got)
	}
	if got := g.launchArgs(""); slices.Contains(got, "--model") {
		t.Fatalf("no model, yet %v", got)
	}
	for _, bad := range []string{"--yolo", "a b", "x\n", strings.Repeat("m", 200), "-m"} {
		if modelPattern.MatchString(bad) {
			t.Fatalf("model %q accepted", bad)
		}
	}
	for _, ok := range []string{"claude-sonnet-4-5", "gpt-5.1-codex", "anthropic/claude-3.5", "sonnet[1m]", "default"} {
		if !modelPattern.MatchString(ok) {
			t.Fatalf("model %q refused", ok)
		}
	}
}

func TestLoadTypes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	types, err := LoadTypes(filepath.Join(dir, "missing.json"))
	if err != nil || len(types) != len(builtinTypes) {
		t.Fatalf("built-ins: %d %v", len(types), err)
	}
	write := func(s string) string {
		p := filepath.Join(dir, "agents.json")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	types, err = LoadTypes(write(`{"codex":{"command":"/opt/codex-acp","args":["--x"]},
		"my-agent":{"display_name":"My Agent","command":"my-acp","args":["serve"],"env":{"MY_TOKEN":"s3cret-value"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := typeMap(types)
	if c := m["codex"]; c.Command.Path != "/opt/codex-acp" || c.Package != "" || c.Detect() != DetectPath || m["gemini"].Command.Path != "npx" {
		t.Fatalf("override: %+v", c)
	}
	my := m["my-agent"]
	if !my.Custom || my.DisplayName != "My Agent" || my.Command.Path != "my-acp" || my.Env["MY_TOKEN"] != "s3cret-value" || my.Install == "" {
		t.Fatalf("custom: %+v", my)
	}
	// Only env overrides a built-in's launch stays as it is.
	types, err = LoadTypes(write(`{"claude-code":{"env":{"MCP_TIMEOUT":"7200000"}}}`))
	if c := typeMap(types)["claude-code"]; err != nil || c.Command.Path != "npx" || c.Env["MCP_TIMEOUT"] != "7200000" {
		t.Fatalf("env-only override: %+v %v", c, err)
	}
}

func TestLoadTypesRefusesInvalidEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for bad, want := range map[string]string{
		`{"my-agent":{"args":["x"]}}`:            `entry "my-agent": field command: is required`,
		`{"codex":{"args":["x"]}}`:               `entry "codex": field command: is required`,
		`{"Bad Name":{"command":"x"}}`:           `agent type names must match`,
		`[1]`:                                    `agents file agents.json`,
		`{"codex":{"command":"x","shell":true}}`: `unknown field "shell"`,
		`{"my-agent":{"command":"x","env":{"KANDEV_TOKEN":"secretval"}}}`: `entry "my-agent": field env: a variable name must match`,
		`{"my-agent":{"command":"x","env":{"bad name":"secretval"}}}`:     `field env:`,
		`{"my-agent":{"command":"x","display_name":"two\nlines"}}`:        `field display_name`,
		`{"my-agent":{"command":"x\ny"}}`:                                 `field command`,
	} {
		p := filepath.Join(dir, "agents.json")
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTypes(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: got %v, want %q", bad, err, want)
		}
		if strings.Contains(err.Error(), "secretval") {
			t.Fatalf("%s: the error shows an env value: %v", bad, err)
		}
	}
}
