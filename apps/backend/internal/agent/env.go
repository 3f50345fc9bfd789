package agent

import (
	"maps"
	"os"
	"slices"
	"strings"
)

// DefaultEnvAllow is what an agent inherits of kandev serve's environment:
// exact names, and prefixes ending in "*". Provider credentials and base
// URLs pass; nothing of Kandev's own (KANDEV_*) ever does, whatever the
// allow-list says, so the operator token cannot reach an agent.
var DefaultEnvAllow = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR", "LANG", "LC_*",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "NPM_CONFIG_*", "npm_config_*", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"ANTHROPIC_*", "CLAUDE_*", "OPENAI_*", "CODEX_*", "GEMINI_*", "GOOGLE_*", "OPENCODE_*",
}

// agentEnv filters environ (KEY=VALUE entries) through allow.
func agentEnv(environ, allow []string) []string {
	out := make([]string, 0, len(allow))
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(k, "KANDEV_") {
			continue
		}
		if envAllowed(k, allow) {
			out = append(out, kv)
		}
	}
	return out
}

func envAllowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// EnvPassed reports whether an agent whose allow-list is allow (nil:
// DefaultEnvAllow) inherits the backend's environment variable name.
func EnvPassed(name string, allow []string) bool {
	if allow == nil {
		allow = DefaultEnvAllow
	}
	return !strings.HasPrefix(name, "KANDEV_") && envAllowed(name, allow)
}

// envAllow is what an agent of type t inherits: the allow-list
// (DefaultEnvAllow when none is set) plus the variables t reads for its
// model API (Type.ModelEnv), which no other type gets.
func (m *Manager) envAllow(t *Type) []string {
	allow := m.cfg.EnvAllow
	if allow == nil {
		allow = DefaultEnvAllow
	}
	if t == nil || len(t.ModelEnv) == 0 {
		return allow
	}
	return append(slices.Clone(allow), t.ModelEnv...)
}

// typeEnv is the environment an agent of type t starts with: what it
// inherits, then the type's own variables (the agents file's, server-side
// only), then the model variable when a profile names a model.
func (m *Manager) typeEnv(t *Type, model string) []string {
	env := agentEnv(os.Environ(), m.envAllow(t))
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		env = append(env, k+"="+t.Env[k])
	}
	if model != "" && t.ModelVar != "" {
		env = append(env, t.ModelVar+"="+model)
	}
	return env
}

// typeSecrets are the values of t's own variables, redacted from whatever
// is shown of its output.
func typeSecrets(t *Type) []string {
	out := make([]string, 0, len(t.Env))
	for _, v := range t.Env {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	return out
}
