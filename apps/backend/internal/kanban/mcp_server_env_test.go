package kanban

import (
	"strings"
	"testing"
)

func TestHijackEnvName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "ld_preload", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
		"PATH", "Path", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONWARNINGS",
		"PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS",
		"GCONV_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "BASH_FUNC_x", "NPM_CONFIG_SCRIPT_SHELL",
		"npm_config_node_options", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_KEY_0", "GIT_ASKPASS",
		"KANDEV_TOKEN", "KANDEV_SESSION_TOKEN", "KANDEV_ANYTHING",
	} {
		if !HijackEnvName(name) {
			t.Errorf("HijackEnvName(%q) = false, want true", name)
		}
	}
	for _, name := range []string{
		"GITHUB_TOKEN", "API_KEY", "MODE", "HOME_DIR", "PATH_PREFIX", "MY_PATH", "NODE_ENV", "PYTHONUNBUFFERED",
		"GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL", "GIT_TERMINAL_PROMPT", "LDAP_URL", "ENVIRONMENT", "KANDEVX",
	} {
		if HijackEnvName(name) {
			t.Errorf("HijackEnvName(%q) = true, want false", name)
		}
	}
}

func TestLaunchCheckNamesTheRuleNeverTheKey(t *testing.T) {
	t.Parallel()
	var first string
	for _, key := range []string{"LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "KANDEV_TOKEN"} {
		err := MCPServerConfig{Type: MCPServerStdio, Command: "x", Env: map[string]string{"OK": "1", key: "/tmp/evil.so"}}.Check()
		if ErrorCode(err) != CodeValidation || !strings.Contains(err.Error(), RuleEnvHijack) || strings.Contains(err.Error(), key) ||
			strings.Contains(err.Error(), "evil") {
			t.Fatalf("%s: got %v, want a VALIDATION_ERROR naming %s and neither the key nor the value", key, err, RuleEnvHijack)
		}
		if first == "" {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("%s: got %q, want the same message for every key (%q)", key, err, first)
		}
	}
	for _, v := range []string{"a\r\nX-Injected: 1", "a\nb", "a\rb", "a\x00b", "a\x7fb", "a\u0085b"} {
		err := MCPServerConfig{Type: MCPServerHTTP, URL: "https://x.example/mcp", Headers: map[string]string{"Authorization": v}}.Check()
		if ErrorCode(err) != CodeValidation || !strings.Contains(err.Error(), RuleHeaderControl) || strings.Contains(err.Error(), "Injected") {
			t.Fatalf("header value %q: got %v, want a VALIDATION_ERROR naming %s", v, err, RuleHeaderControl)
		}
	}
	if err := (MCPServerConfig{Type: MCPServerHTTP, URL: "https://x.example/mcp", Headers: map[string]string{"Bad\r\nName": "v"}}).LaunchCheck(); ErrorCode(err) != CodeValidation {
		t.Fatalf("header name with CR LF: got %v, want VALIDATION_ERROR", err)
	}
	ok := MCPServerConfig{Type: MCPServerStdio, Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "t", "GIT_AUTHOR_NAME": "Bot"}}
	if err := ok.Check(); err != nil {
		t.Fatalf("ordinary env: %v", err)
	}
}
