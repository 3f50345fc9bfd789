package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Command is how an agent type is launched: an executable and its
// arguments. Only the server decides it (built-in metadata, or the
// operator's agents file): no payload can name an executable.
type Command struct {
	Path string   `json:"command"`
	Args []string `json:"args,omitempty"`
}

// selfCommand marks the built-in agent that is the kandev binary itself.
const selfCommand = "<kandev>"

// AgentsFile is the name of the operator's agents file in the data dir.
const AgentsFile = "agents.json"

var (
	agentNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	envNamePattern   = regexp.MustCompile(kanban.EnvNamePattern)
)

// Bounds of an agents file entry.
const (
	maxFileEntries  = 64
	maxFileArgs     = 64
	maxFileEnv      = 64
	maxFileFieldLen = 4096
)

// fileEntry is one agent type of the agents file. For a built-in type it
// overrides the launch (command and args, plus env); a new name adds a
// custom type, which needs a command.
type fileEntry struct {
	DisplayName string            `json:"display_name"`
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	Install     string            `json:"install"`
}

// LoadTypes returns every agent type: the built-in ones, overridden and
// extended by the JSON object in path (agent type name → {"command",
// "args", "env", "display_name", "install"}) when that file exists. A
// relative command is looked up on PATH when the agent starts. An invalid
// entry is refused with an error naming the entry and the field, never a
// value of its env.
func LoadTypes(path string) ([]Type, error) {
	out := BuiltinTypes()
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the agents file: %w", err)
	}
	base := filepath.Base(path)
	var entries map[string]fileEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("agents file %s: %w", base, err)
	}
	if len(entries) > maxFileEntries {
		return nil, fmt.Errorf("agents file %s: more than %d agent types", base, maxFileEntries)
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if err := checkEntry(name, entries[name]); err != nil {
			return nil, fmt.Errorf("agents file %s: %w", base, err)
		}
		out = applyEntry(out, name, entries[name])
	}
	return out, nil
}

// checkEntry validates one entry; its errors name the entry and field.
func checkEntry(name string, e fileEntry) error {
	if !agentNamePattern.MatchString(name) {
		return fmt.Errorf("entry %q: agent type names must match %s", kanban.Clip(name, 64), agentNamePattern)
	}
	at := func(field, why string) error { return fmt.Errorf("entry %q: field %s: %s", name, field, why) }
	builtin := slices.ContainsFunc(builtinTypes, func(t Type) bool { return t.Name == name })
	switch {
	case e.Command == "" && (!builtin || len(e.Args) > 0):
		return at("command", "is required")
	case len(e.Command) > maxFileFieldLen || strings.ContainsFunc(e.Command, isControl):
		return at("command", "must be at most 4096 characters without control characters")
	case len(e.Args) > maxFileArgs:
		return at("args", fmt.Sprintf("at most %d arguments", maxFileArgs))
	case len(e.Env) > maxFileEnv:
		return at("env", fmt.Sprintf("at most %d variables", maxFileEnv))
	case len(e.DisplayName) > kanban.MaxNameLen || strings.ContainsFunc(e.DisplayName, isControl):
		return at("display_name", fmt.Sprintf("must be at most %d characters on one line", kanban.MaxNameLen))
	case len(e.Install) > maxFileFieldLen:
		return at("install", "must be at most 4096 characters")
	}
	for i, a := range e.Args {
		if len(a) > maxFileFieldLen || strings.ContainsRune(a, 0) {
			return at(fmt.Sprintf("args[%d]", i), "must be at most 4096 characters without NUL")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		if !envNamePattern.MatchString(k) || strings.HasPrefix(strings.ToUpper(k), "KANDEV_") {
			return at("env", "a variable name must match "+kanban.EnvNamePattern+" and not start with KANDEV_")
		}
		if len(e.Env[k]) > maxFileFieldLen || strings.ContainsRune(e.Env[k], 0) {
			return at("env."+k, "its value must be at most 4096 characters without NUL (the value is not shown)")
		}
	}
	return nil
}

// applyEntry overrides the built-in type name with e, or adds it.
func applyEntry(types []Type, name string, e fileEntry) []Type {
	i := slices.IndexFunc(types, func(t Type) bool { return t.Name == name })
	if i < 0 {
		types = append(types, Type{Name: name, DisplayName: name, Custom: true,
			Install: "Configured in the server-side agents file; install its command (" + filepath.Base(e.Command) + ") on this machine."})
		i = len(types) - 1
	}
	t := &types[i]
	if e.Command != "" {
		// The file's command is what launches it and what is probed.
		t.Command, t.Package, t.Binary = Command{Path: e.Command, Args: slices.Clone(e.Args)}, "", ""
	}
	if e.DisplayName != "" {
		t.DisplayName = e.DisplayName
	}
	if e.Install != "" {
		t.Install = e.Install
	}
	if len(e.Env) > 0 {
		if t.Env == nil {
			t.Env = map[string]string{}
		}
		maps.Copy(t.Env, e.Env)
	}
	return types
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// typeMap indexes types by name.
func typeMap(types []Type) map[string]Type {
	out := make(map[string]Type, len(types))
	for _, t := range types {
		out[t.Name] = t
	}
	return out
}
