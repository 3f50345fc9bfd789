package kanban

import (
	"context"
	"sync/atomic"
	"time"
)

// The audit log: one row per state-changing action that took effect, who
// did it, what, on which entities, when and from where. It is appended
// with the action's change (in the same transaction where the store
// writes one, see AuditRecord) and never updated or deleted except by the
// retention sweep.

// Bounds of an audit row.
const (
	// MaxAuditSummary bounds an entry's redacted summary in bytes.
	MaxAuditSummary = 512
	// MaxAuditTargets bounds the entity ids an entry names.
	MaxAuditTargets = 8
	// MaxAuditActorLen bounds an actor filter (an actor is "operator",
	// "session:<id>" and, later, "user:<id>" or "token:<id>").
	MaxAuditActorLen = 80
	// MaxAuditActionLen bounds an action filter (a dotted action name).
	MaxAuditActionLen = 64
)

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID string `json:"id"`
	// Actor is the bound identity of the caller: "operator" (the operator
	// token) or "session:<session id>"; a user or personal token identity
	// slots in as "user:<id>" / "token:<id>".
	Actor string `json:"actor"`
	// ActorKind is the principal's kind: operator or session.
	ActorKind string `json:"actor_kind"`
	// SessionID and TaskID are a session principal's binding.
	SessionID string `json:"session_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	Action    Action `json:"action"`
	// Targets are the entity ids the call named (its payload's id fields)
	// and the id of what it created, at most MaxAuditTargets.
	Targets []string `json:"targets"`
	// Summary is the payload, redacted and bounded: which fields were set,
	// short values, never a secret, a prompt body or a document's content.
	Summary string `json:"summary"`
	// Via is the transport (ws, mcp, board, cli, internal); From where the
	// call came from (the connection's remote address), when known.
	Via  string    `json:"via"`
	From string    `json:"from,omitempty"`
	At   time.Time `json:"at"`
}

// AuditFilter narrows ListAudit; zero fields match everything. Since is
// inclusive, Until exclusive.
type AuditFilter struct {
	Actor  string
	Action Action
	Target string
	Since  time.Time
	Until  time.Time
	Page   Page
}

// AuditService stores the audit log.
type AuditService interface {
	// AppendAudit appends e in its own transaction (an action whose change
	// wrote through no store transaction).
	AppendAudit(ctx context.Context, e AuditEntry) error
	// CompleteAudit adds the id of what the action created to its entry's
	// targets (once, right after the action returned).
	CompleteAudit(ctx context.Context, id string, target string) error
	// ListAudit lists entries newest first.
	ListAudit(ctx context.Context, f AuditFilter) (*List[AuditEntry], error)
	// PruneAudit deletes the entries older than before and says how many.
	PruneAudit(ctx context.Context, before time.Time) (int64, error)
}

// AuditRecord is the audit entry of an action in progress, carried by the
// action's context to the store: the store appends it inside the first
// write transaction of the action that commits, so a refused or failed
// action leaves no row and the change and its row commit together. Its
// state moves once: pending → claimed (a transaction holds it) → written,
// or back to pending when that transaction failed; closed when the action
// returned (later writes, e.g. of work it started, carry no entry).
type AuditRecord struct {
	Entry AuditEntry
	state atomic.Int32
}

// AuditRecord states.
const (
	auditPending int32 = iota
	auditClaimed
	auditWritten
	auditClosed
)

// Claim takes the entry for a transaction; false when another holds it,
// it is written or the action returned.
func (r *AuditRecord) Claim() bool {
	return r != nil && r.state.CompareAndSwap(auditPending, auditClaimed)
}

// Settle ends a claim: the entry was committed (ok) or not.
func (r *AuditRecord) Settle(ok bool) {
	if ok {
		r.state.Store(auditWritten)
		return
	}
	r.state.CompareAndSwap(auditClaimed, auditPending)
}

// Close ends the action: it reports whether the entry was written; a
// record not written is closed (no later write carries it).
func (r *AuditRecord) Close() (written bool) {
	for {
		switch s := r.state.Load(); s {
		case auditWritten:
			return true
		case auditClosed:
			return false
		default:
			if r.state.CompareAndSwap(s, auditClosed) {
				return false
			}
		}
	}
}

type auditKey struct{}

// WithAudit returns ctx carrying r.
func WithAudit(ctx context.Context, r *AuditRecord) context.Context {
	return context.WithValue(ctx, auditKey{}, r)
}

// AuditOf returns the audit record ctx carries, or nil.
func AuditOf(ctx context.Context) *AuditRecord {
	r, _ := ctx.Value(auditKey{}).(*AuditRecord)
	return r
}
