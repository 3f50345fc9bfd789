package kanban

import (
	"maps"
	"slices"
)

// An agent or executor profile is global (WorkspaceID "", the operator's)
// or of one workspace (created by a config-mode session of it, the
// operator's delegate there). What a profile names runs in every session
// that uses it, so a workspace's delegate reads global profiles and its
// own, changes only its own, and a task uses only a global profile or one
// of its workspace. The writer or reader "" is the operator.

// Profile kinds, as refusals name them.
const (
	AgentProfileKind    = "agent"
	ExecutorProfileKind = "executor"
)

// ProfileVisible reports whether a reader of workspace readerWS ("" the
// operator) sees a profile of profileWS.
func ProfileVisible(profileWS, readerWS string) bool {
	return readerWS == "" || profileWS == "" || profileWS == readerWS
}

// CheckProfileWrite refuses (FORBIDDEN) a change of a profile of
// profileWS by a writer of writerWS ("" the operator, who changes any).
func CheckProfileWrite(kind, profileWS, writerWS string) error {
	switch {
	case writerWS == "" || profileWS == writerWS:
		return nil
	case profileWS == "":
		return Errorf(CodeForbidden, "global %s profiles are changed by the operator only; a config-mode session creates and changes its own workspace's profiles", kind)
	default:
		return Errorf(CodeForbidden, "this %s profile belongs to another workspace", kind)
	}
}

// CheckProfileUse refuses (FORBIDDEN) a session of a task of taskWS that
// would run with a profile of another workspace.
func CheckProfileUse(kind, profileWS, taskWS string) error {
	if profileWS == "" || profileWS == taskWS {
		return nil
	}
	return Errorf(CodeForbidden, "this %s profile belongs to another workspace; use a global profile or one of the task's workspace", kind)
}

// errDelegateStdio is what a config-mode session is told when it writes a
// stdio server.
func errDelegateStdio() error {
	return Errorf(CodeForbidden, "stdio MCP servers (command, args, env) are written by the operator only; "+
		"a config-mode session may add, change and remove http servers, toggle enabled, and send the stored stdio servers back unchanged")
}

// CheckDelegateServers refuses (FORBIDDEN) an MCP configuration a
// config-mode session may not write over stored: every stored stdio server
// must come back unchanged (masked values already resolved), and no stdio
// server may appear, under a new name or in place of an http one. HTTP
// servers are the session's to add, change and remove.
func CheckDelegateServers(stored, next map[string]MCPServerConfig) error {
	for name, s := range stored {
		if s.Type != MCPServerStdio {
			continue
		}
		if n, ok := next[name]; !ok || !sameServer(s, n) {
			return errDelegateStdio()
		}
	}
	for name, n := range next {
		if n.Type == MCPServerStdio && stored[name].Type != MCPServerStdio {
			return errDelegateStdio()
		}
	}
	return nil
}

// sameServer reports whether a and b configure the same server (an empty
// list or map equals an absent one).
func sameServer(a, b MCPServerConfig) bool {
	return a.Type == b.Type && a.Command == b.Command && slices.Equal(a.Args, b.Args) && maps.Equal(a.Env, b.Env) &&
		a.URL == b.URL && maps.Equal(a.Headers, b.Headers) && a.Proxy == b.Proxy && a.TimeoutSeconds == b.TimeoutSeconds &&
		a.MaxToolBytes == b.MaxToolBytes && a.MaxServerBytes == b.MaxServerBytes
}

// CheckProfileRead refuses (FORBIDDEN) a reader of readerWS ("" the
// operator) a profile of another workspace.
func CheckProfileRead(kind, profileWS, readerWS string) error {
	if ProfileVisible(profileWS, readerWS) {
		return nil
	}
	return Errorf(CodeForbidden, "this %s profile belongs to another workspace", kind)
}
