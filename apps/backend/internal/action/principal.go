package action

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// Kind is the kind of authenticated caller.
type Kind int

// Principal kinds.
const (
	// Operator holds the operator token: CLI, WebSocket clients, the external /mcp endpoint.
	Operator Kind = iota + 1
	// Session holds a per-session token and is bound to one task and session.
	Session
)

// String names the kind: "operator" or "session".
func (k Kind) String() string {
	switch k {
	case Operator:
		return "operator"
	case Session:
		return "session"
	}
	return "unauthenticated"
}

// Principal is the identity of a call, attached by the server from the
// connection's credentials, never from a payload.
type Principal struct {
	Kind        Kind
	SessionID   string
	TaskID      string
	WorkspaceID string
	// Mode is a session's MCP mode at the time of the call, set by the
	// registry from the stored session when it authorizes the call
	// (whatever the caller set is replaced).
	Mode kanban.Mode
	// Via is the transport the call came over (ws, board, mcp, cli;
	// empty: internal) and From its remote address, when known: set by
	// the transport, recorded in the audit log.
	Via  string
	From string
}

// IsOperator reports whether p is the operator.
func (p Principal) IsOperator() bool { return p.Kind == Operator }

// Allow says which principals may call an action.
type Allow uint8

// Allow bits.
const (
	// AllowOperator admits the operator.
	AllowOperator Allow = 1 << iota
	// AllowSession admits any session principal (the handler scopes it).
	AllowSession
	// AllowConfigSession admits a session principal while its MCP mode is config.
	AllowConfigSession
)

// The Allow sets most actions declare.
const (
	// all admits the operator and every session (the handler scopes it).
	all = AllowOperator | AllowSession
	// cfg admits the operator and config-mode sessions (its delegates).
	cfg = AllowOperator | AllowConfigSession
)

// Effect is what an action does to the state: it reads, or it writes
// (changes something: a row, a file, a process, an outside system).
type Effect uint8

// Effects. The zero Effect is none: a declaration must choose. Writes
// changes the database: it is audited when one of its write transactions
// commits (a call that changed nothing — a deduplicated retry — leaves
// no entry). External changes something outside it (git, a forge, a
// file): it is audited whenever it is acknowledged.
const (
	Reads Effect = iota + 1
	Writes
	External
)

// String names the effect: "reads" or "writes".
func (e Effect) String() string {
	switch e {
	case Reads:
		return "reads"
	case Writes:
		return "writes"
	case External:
		return "external"
	}
	return "none"
}
