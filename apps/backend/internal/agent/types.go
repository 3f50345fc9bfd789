package agent

import (
	"maps"
	"slices"
	"strings"
)

// Type is an agent type's launch metadata: how it starts, how Kandev
// tells whether it is installed, how an operator installs it, and how it
// is told its model. Only the server decides it (the built-in table
// below, or the operator's agents file): no payload can name a command.
type Type struct {
	// Name is the agent type's stable name (its agents row's name).
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	// Command launches the agent speaking ACP on its stdin and stdout.
	Command Command `json:"command"`
	// Package is the npm package an npx launch runs ("" for a native
	// binary). Binary is the native executable looked up on PATH before
	// it is probed ("" when the command itself is what is probed).
	Package string `json:"package,omitempty"`
	Binary  string `json:"binary,omitempty"`
	// Install is the exact command that installs it (or where to get it,
	// for agents without one).
	Install string `json:"install"`
	// ModelEnv are the environment variables it reads for its model API:
	// base URL, key, model. They pass to the agent from the backend's
	// environment with the default allow-list.
	ModelEnv []string `json:"model_env,omitempty"`
	// ModelFlag is the launch flag that selects the model ("{model}" is
	// replaced), ModelVar the variable that does; either is applied when
	// a profile names a model, besides ACP model selection.
	ModelFlag []string `json:"model_flag,omitempty"`
	ModelVar  string   `json:"model_var,omitempty"`
	// Env is set in the agent's environment (custom agents: from the
	// server-side agents file; never shown).
	Env map[string]string `json:"-"`
	// Custom: the agents file added it.
	Custom bool `json:"custom,omitempty"`
}

// Detection methods.
const (
	// DetectACP runs the launch command (npx without downloading) and
	// asks it ACP initialize.
	DetectACP = "acp"
	// DetectPath looks the binary up on PATH, then probes it as DetectACP.
	DetectPath = "path"
	// DetectSelf is the kandev binary itself (the mock agent).
	DetectSelf = "self"
)

// Detect is how the type's installation is detected.
func (t Type) Detect() string {
	switch {
	case t.Command.Path == selfCommand:
		return DetectSelf
	case t.Binary != "" || t.Command.Path != "npx":
		return DetectPath
	}
	return DetectACP
}

// npx is the launch of an npm package as the reference launches its ACP
// runtimes: from npm's cache when it is there, downloaded when not.
func npx(pkg string, args ...string) Command {
	return Command{Path: "npx", Args: append([]string{"--yes", "--prefer-offline", pkg}, args...)}
}

func native(bin string, args ...string) Command { return Command{Path: bin, Args: args} }

// providerKeys are the variables agents that talk to any provider read.
var providerKeys = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}

// builtinTypes is one entry per agent type the reference product ships
// (its apps/backend/internal/agent/agents), plus the mock agent.
var builtinTypes = []Type{
	{Name: "claude-code", DisplayName: "Claude Code", Command: npx("@agentclientprotocol/claude-agent-acp"),
		Package: "@agentclientprotocol/claude-agent-acp", Install: "npm install -g @anthropic-ai/claude-code @agentclientprotocol/claude-agent-acp",
		ModelEnv: []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}},
	{Name: "codex", DisplayName: "Codex", Command: npx("@agentclientprotocol/codex-acp"),
		Package: "@agentclientprotocol/codex-acp", Install: "npm install -g @openai/codex @agentclientprotocol/codex-acp",
		ModelEnv: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}},
	{Name: "copilot", DisplayName: "GitHub Copilot", Command: npx("@github/copilot", "--acp"),
		Package: "@github/copilot", Install: "npm install -g @github/copilot",
		ModelEnv: []string{"COPILOT_GITHUB_TOKEN"}},
	{Name: "gemini", DisplayName: "Gemini CLI", Command: npx("@google/gemini-cli", "--acp"),
		Package: "@google/gemini-cli", Install: "npm install -g @google/gemini-cli",
		ModelEnv: []string{"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_MODEL"}, ModelFlag: []string{"--model", "{model}"}},
	{Name: "opencode", DisplayName: "OpenCode", Command: npx("opencode-ai", "acp"),
		Package: "opencode-ai", Install: "npm install -g opencode-ai", ModelEnv: providerKeys},
	{Name: "amp", DisplayName: "Amp", Command: npx("amp-acp"), Package: "amp-acp", Install: "npm install -g amp-acp",
		ModelEnv: []string{"AMP_API_KEY", "AMP_URL"}},
	{Name: "auggie", DisplayName: "Auggie", Command: npx("@augmentcode/auggie", "--acp"), Package: "@augmentcode/auggie",
		Install: "npm install -g @augmentcode/auggie", ModelEnv: []string{"AUGMENT_SESSION_AUTH"}},
	{Name: "cursor", DisplayName: "Cursor", Command: native("cursor-agent", "acp"), Binary: "cursor-agent",
		Install: "curl -fsS https://cursor.com/install | bash", ModelEnv: []string{"CURSOR_API_KEY"}},
	{Name: "devin", DisplayName: "Devin", Command: native("devin", "acp"), Binary: "devin",
		Install: "curl -fsSL https://cli.devin.ai/install.sh | bash", ModelEnv: []string{"WINDSURF_API_KEY"}},
	{Name: "qwen", DisplayName: "Qwen Code", Command: npx("@qwen-code/qwen-code", "--acp"), Package: "@qwen-code/qwen-code",
		Install: "npm install -g @qwen-code/qwen-code", ModelEnv: []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"},
		ModelFlag: []string{"--model", "{model}"}},
	{Name: "droid", DisplayName: "Factory Droid", Command: npx("droid", "exec", "--output-format", "acp"), Package: "droid",
		Install: "npm install -g droid", ModelEnv: []string{"FACTORY_API_KEY"}},
	{Name: "iflow", DisplayName: "iFlow", Command: npx("@iflow-ai/iflow-cli", "--experimental-acp"), Package: "@iflow-ai/iflow-cli",
		Install: "npm install -g @iflow-ai/iflow-cli"},
	{Name: "kilocode", DisplayName: "Kilo Code", Command: npx("@kilocode/cli", "acp"), Package: "@kilocode/cli",
		Install: "npm install -g @kilocode/cli"},
	{Name: "pi", DisplayName: "Pi", Command: npx("pi-acp"), Package: "pi-acp",
		Install: "npm install -g --ignore-scripts @earendil-works/pi-coding-agent", ModelEnv: providerKeys},
	{Name: "kimi", DisplayName: "Kimi", Command: native("kimi", "acp"), Binary: "kimi", Install: "Install Kimi CLI from Moonshot AI (https://github.com/MoonshotAI/kimi-cli)"},
	{Name: "kiro", DisplayName: "Kiro", Command: native("kiro-cli-chat", "acp"), Binary: "kiro-cli-chat", Install: "Install Kiro CLI from AWS (https://kiro.dev)"},
	{Name: "qoder", DisplayName: "Qoder", Command: native("qodercli", "--acp"), Binary: "qodercli", Install: "Install Qoder CLI from https://qoder.com"},
	{Name: "trae", DisplayName: "Trae", Command: native("traecli", "acp", "serve"), Binary: "traecli", Install: "Install Trae CLI from https://trae.ai"},
	{Name: "grok", DisplayName: "Grok", Command: native("grok", "--no-auto-update", "agent", "stdio"), Binary: "grok",
		Install: "npm install -g @xai-official/grok", ModelEnv: []string{"XAI_API_KEY"}},
	{Name: "hermes", DisplayName: "Hermes", Command: native("hermes", "acp"), Binary: "hermes",
		Install: "curl -fsSL https://hermes-agent.nousresearch.com/install.sh | bash",
		Env:     map[string]string{"HERMES_ACP_SKIP_CONFIGURED_MCP": "1"}},
	{Name: "omp", DisplayName: "Oh My Pi", Command: native("omp", "acp"), Binary: "omp",
		Install: "bun install -g @oh-my-pi/pi-coding-agent", ModelEnv: providerKeys},
	{Name: "mock-agent", DisplayName: "Mock Agent", Command: Command{Path: selfCommand, Args: []string{"agent", "mock"}},
		Install: "Built into kandev (kandev agent mock)"},
}

// BuiltinTypes returns a copy of the built-in agent types, in table order.
func BuiltinTypes() []Type {
	out := make([]Type, len(builtinTypes))
	for i, t := range builtinTypes {
		out[i] = t.clone()
	}
	return out
}

func (t Type) clone() Type {
	t.Command.Args = slices.Clone(t.Command.Args)
	t.ModelEnv, t.ModelFlag = slices.Clone(t.ModelEnv), slices.Clone(t.ModelFlag)
	t.Env = maps.Clone(t.Env)
	return t
}

// launchArgs is the command's arguments with the model flag of model
// appended when the type has one and model is set.
func (t Type) launchArgs(model string) []string {
	args := slices.Clone(t.Command.Args)
	if model == "" || len(t.ModelFlag) == 0 {
		return args
	}
	for _, a := range t.ModelFlag {
		args = append(args, strings.ReplaceAll(a, "{model}", model))
	}
	return args
}

// probeCommand is the command a detection probe runs: the launch command,
// with an npx launch told never to download nor even ask the registry
// (npx --no --offline): an agent is installed when it runs from this
// machine alone, and probing one that is not installs nothing.
func (t Type) probeCommand() Command {
	c := Command{Path: t.Command.Path, Args: slices.Clone(t.Command.Args)}
	if c.Path == "npx" {
		for i, a := range c.Args {
			switch a {
			case "--yes", "-y":
				c.Args[i] = "--no"
			case "--prefer-offline":
				c.Args[i] = "--offline"
			}
		}
	}
	return c
}

// hint is how to install t, for the error of a launch that failed.
func (t Type) hint() string {
	if t.Install == "" {
		return ""
	}
	return " Install it with: " + t.Install
}
