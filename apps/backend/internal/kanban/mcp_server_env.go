package kanban

import (
	"slices"
	"strings"
	"unicode"
)

// Rules an MCP server entry breaks, named in refusals and in the reason a
// stored entry is not started: the rule, never the caller's key or value.
const (
	// RuleEnvHijack: an environment variable the dynamic loader, a shell
	// or an interpreter reads to load or run code (HijackEnvName).
	RuleEnvHijack = "env_loader_or_interpreter"
	// RuleHeaderControl: a header name or value with CR, LF or another
	// control character (it could split or smuggle a request).
	RuleHeaderControl = "header_control_characters"
)

// hijackEnvNames are the exact names HijackEnvName refuses: variables
// that make a loader, a shell or an interpreter load or run code of the
// writer's choosing before or instead of the configured command.
var hijackEnvNames = []string{
	"PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "GCONV_PATH",
	"NODE_OPTIONS", "NODE_PATH",
	"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONBREAKPOINT",
	"PYTHONEXECUTABLE", "PYTHONINSPECT",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB",
	"RUBYOPT", "RUBYLIB",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "DOTNET_STARTUP_HOOKS",
}

// hijackEnvPrefixes are the name prefixes HijackEnvName refuses: the
// dynamic loaders' (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, DYLD_INSERT_LIBRARIES,
// ...), bash's exported functions, npm's configuration (script-shell,
// node-options), git's (GIT_* except gitIdentityEnv: exec path, ssh
// command, askpass, editors, pager, config injection, hooks) and Kandev's own.
var hijackEnvPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "NPM_CONFIG_", "GIT_", "KANDEV_"}

// gitIdentityEnv are the GIT_* variables that only name a commit's author
// or committer, or turn off git's credential prompt: they run nothing.
var gitIdentityEnv = []string{
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT",
}

// HijackEnvName reports whether an MCP server entry may not set the
// environment variable name (RuleEnvHijack): LD_*, DYLD_*, PATH,
// NODE_OPTIONS, PYTHONPATH, BASH_ENV, GIT_* (but the author and committer
// identity), KANDEV_* and the other names of hijackEnvNames. Names compare
// case-insensitively, as some platforms' environments do.
func HijackEnvName(name string) bool {
	up := strings.ToUpper(name)
	if slices.Contains(hijackEnvNames, up) {
		return true
	}
	for _, p := range hijackEnvPrefixes {
		if strings.HasPrefix(up, p) {
			return p != "GIT_" || !slices.Contains(gitIdentityEnv, up)
		}
	}
	return false
}

// hasControl reports whether s holds a control character (CR, LF, NUL,
// TAB, DEL, C1 controls...).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// LaunchCheck applies the rules a stored entry must still meet when a
// session starts (entries written before a rule existed are held to it
// too): no environment variable that hijacks the loader or an interpreter
// (RuleEnvHijack), no header name or value with a control character
// (RuleHeaderControl). Its errors name the rule, never the key.
func (c MCPServerConfig) LaunchCheck() error {
	for name := range c.Env {
		if HijackEnvName(name) {
			return FieldError("servers.*.env", "names a variable the dynamic loader, a shell or an interpreter reads to load or run code (rule %s; the agents documentation lists them)", RuleEnvHijack)
		}
	}
	for name, v := range c.Headers {
		if hasControl(name) || hasControl(v) {
			return FieldError("servers.*.headers", "a header name or value holds CR, LF or another control character (rule %s)", RuleHeaderControl)
		}
	}
	return nil
}
