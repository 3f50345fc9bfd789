package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// Command is how an agent type is launched: an executable and its
// arguments. Only the server decides it (built-in metadata, or the
// operator's override file): no payload can name an executable.
type Command struct {
	Path string   `json:"command"`
	Args []string `json:"args,omitempty"`
}

// selfCommand marks the built-in agent that is the kandev binary itself.
const selfCommand = "<kandev>"

// builtinCommands are the ACP launch commands of the built-in agent types,
// as the reference product launches its managed ACP runtimes.
var builtinCommands = map[string]Command{
	"claude-code": {Path: "npx", Args: []string{"--yes", "--prefer-offline", "@agentclientprotocol/claude-agent-acp"}},
	"codex":       {Path: "npx", Args: []string{"--yes", "--prefer-offline", "@agentclientprotocol/codex-acp"}},
	"gemini":      {Path: "npx", Args: []string{"--yes", "--prefer-offline", "@google/gemini-cli", "--acp"}},
	"opencode":    {Path: "npx", Args: []string{"--yes", "--prefer-offline", "opencode-ai", "acp"}},
	"mock-agent":  {Path: selfCommand, Args: []string{"agent", "mock"}},
}

// AgentsFile is the name of the operator's override file in the data dir.
const AgentsFile = "agents.json"

var agentNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// LoadCommands returns the launch command of every agent type: the
// built-in ones, overridden by the JSON object in path (agent type name →
// {"command": ..., "args": [...]}) when that file exists. A relative
// command is looked up on PATH when the agent starts.
func LoadCommands(path string) (map[string]Command, error) {
	out := make(map[string]Command, len(builtinCommands))
	for k, v := range builtinCommands {
		out[k] = v
	}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read agent commands: %w", err)
	}
	var over map[string]Command
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&over); err != nil {
		return nil, fmt.Errorf("agent commands file %s: %w", filepath.Base(path), err)
	}
	for name, c := range over {
		if !agentNamePattern.MatchString(name) {
			return nil, fmt.Errorf("agent commands file %s: agent type names must match %s", filepath.Base(path), agentNamePattern)
		}
		if c.Path == "" {
			return nil, fmt.Errorf("agent commands file %s: agent type %s has no command", filepath.Base(path), name)
		}
		out[name] = c
	}
	return out, nil
}
