package action

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The audit log of the registry: every action declared Writes that is
// authorized, checked and run appends one entry (kanban.AuditEntry). The
// entry rides the action's context to the store, which appends it in the
// first write transaction of the action that commits (see
// kanban.AuditRecord): a refused call, or one that failed before changing
// anything, leaves no entry, nor does one that changed nothing (a
// deduplicated retry, a second answer); one that changed the database
// has it in the same commit. An External action (a git push, a forge
// call, a file) that wrote nothing through the store gets its entry from
// the registry before it answers.

// auditWait bounds the registry's own audit writes after the handler.
const auditWait = 5 * time.Second

// summaryValueMax is the longest string value a summary shows (longer
// ones show their length only).
const summaryValueMax = 60

// bodyFields are payload fields whose text a summary never shows, only
// its length: prompts, bodies, documents, secrets, URLs that may carry
// credentials, environments.
var bodyFields = []string{"prompt", "description", "content", "body", "message", "text", "comment", "answer", "answers",
	"secret", "value", "token", "password", "url", "env", "script", "prepare_script", "cleanup_script", "servers", "config",
	"events", "data", "markdown", "questions"}

var auditIDRe = regexp.MustCompile(kanban.IDPattern)

// Actor names p's bound identity in the audit log: "operator" or
// "session:<id>" (a user's or personal token's identity will be
// "user:<id>" / "token:<id>").
func (p Principal) Actor() string {
	if p.Kind == Session {
		return "session:" + p.SessionID
	}
	return p.Kind.String()
}

// audited runs a Writes action with its audit record in ctx, then makes
// sure an acknowledged call has its entry.
func (r *Registry) audited(ctx context.Context, a *registered, p Principal, raw json.RawMessage) (any, error) {
	rec := &kanban.AuditRecord{Entry: r.auditEntry(ctx, a.c, p, raw)}
	v, err := a.run(kanban.WithAudit(ctx, rec), p, raw)
	written := rec.Close()
	if err != nil || (!written && a.c.effect != External) {
		return v, err
	}
	created := createdID(v)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditWait)
	defer cancel()
	if !written {
		e := rec.Entry
		if created != "" && !slices.Contains(e.Targets, created) && len(e.Targets) < kanban.MaxAuditTargets {
			e.Targets = append(e.Targets, created)
		}
		if aerr := r.audit.AppendAudit(actx, e); aerr != nil {
			r.log.ErrorContext(ctx, "audit entry not written", slog.String("action", string(a.c.name)), slog.String("error", aerr.Error()))
			return nil, fmt.Errorf("append audit entry: %w", aerr)
		}
		return v, nil
	}
	if created != "" && !slices.Contains(rec.Entry.Targets, created) && len(rec.Entry.Targets) < kanban.MaxAuditTargets {
		if aerr := r.audit.CompleteAudit(actx, rec.Entry.ID, created); aerr != nil {
			// The entry exists; only the created id is missing from it.
			r.log.WarnContext(ctx, "audit entry incomplete", slog.String("action", string(a.c.name)), slog.String("error", aerr.Error()))
		}
	}
	return v, nil
}

// auditEntry builds the entry of a checked call.
func (r *Registry) auditEntry(ctx context.Context, c *Contract, p Principal, raw json.RawMessage) kanban.AuditEntry {
	var args map[string]any
	_ = json.Unmarshal(raw, &args) // a checked payload is an object; a failure leaves no summary
	e := kanban.AuditEntry{ID: kanban.NewID(), Actor: p.Actor(), ActorKind: p.Kind.String(), Action: c.name,
		Targets: auditTargets(p, args), Summary: auditSummary(r.redactor(), args), Via: p.Via, From: p.From, At: kanban.Now()}
	if p.Kind == Session {
		e.SessionID, e.TaskID = p.SessionID, p.TaskID
	}
	if e.From == "" {
		e.From = RemoteOf(ctx)
	}
	if e.Via == "" {
		e.Via = "internal"
	}
	return e
}

// redactor is the registry's redactor, or the shape-only default.
func (r *Registry) redactor() *redact.Redactor {
	if r.redact != nil {
		if red := r.redact(); red != nil {
			return red
		}
	}
	return redact.New()
}

// auditTargets are the ids a payload names: its id and *_id fields
// ("self" is the bound task), in name order.
func auditTargets(p Principal, args map[string]any) []string {
	keys := make([]string, 0, len(args))
	for k := range args {
		if (k == "id" || strings.HasSuffix(k, "_id")) && k != "external_id" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := []string{}
	for _, k := range keys {
		s, ok := args[k].(string)
		if s == "self" && p.Kind == Session {
			s = p.TaskID
		}
		if !ok || !auditIDRe.MatchString(s) || slices.Contains(out, s) {
			continue
		}
		if out = append(out, s); len(out) == kanban.MaxAuditTargets {
			break
		}
	}
	return out
}

// auditSummary is a payload as "key=value" pairs in name order: short
// strings, numbers and booleans as they are (redacted), bodies and long
// strings as their length, objects and arrays as their size; at most
// kanban.MaxAuditSummary bytes.
func auditSummary(red *redact.Redactor, args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		part := k + "=" + summaryValue(k, args[k])
		if b.Len()+len(part)+1 > kanban.MaxAuditSummary {
			b.WriteString(" …")
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(part)
	}
	return red.String(b.String())
}

func summaryValue(key string, v any) string {
	switch x := v.(type) {
	case string:
		if slices.Contains(bodyFields, key) || redact.SecretName(key) || len(x) > summaryValueMax {
			return "<" + strconv.Itoa(len(x)) + " bytes>"
		}
		return strconv.Quote(x)
	case map[string]any:
		return "{" + strconv.Itoa(len(x)) + " keys}"
	case []any:
		return "[" + strconv.Itoa(len(x)) + " items]"
	case nil:
		return "null"
	default:
		if slices.Contains(bodyFields, key) || redact.SecretName(key) {
			return "<set>"
		}
		return fmt.Sprint(x)
	}
}

// createdID is the id of what an action's result holds: its ID field, or
// that of its first struct field holding one (a created task).
func createdID(v any) string {
	rv := reflect.ValueOf(v)
	for depth := 0; depth < 2; depth++ {
		for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
			if rv.IsNil() {
				return ""
			}
			rv = rv.Elem()
		}
		if rv.Kind() != reflect.Struct {
			return ""
		}
		if f := rv.FieldByName("ID"); f.IsValid() && f.Kind() == reflect.String {
			if s := f.String(); auditIDRe.MatchString(s) {
				return s
			}
			return ""
		}
		next := reflect.Value{}
		for i := range rv.NumField() {
			f := rv.Field(i)
			if rv.Type().Field(i).IsExported() && f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Struct {
				next = f
				break
			}
		}
		if !next.IsValid() {
			return ""
		}
		rv = next
	}
	return ""
}

type remoteKey struct{}

// WithRemote returns ctx carrying the address a call came from (an HTTP
// request's remote address), for the audit log.
func WithRemote(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, remoteKey{}, addr)
}

// RemoteOf returns the address WithRemote put in ctx, or "".
func RemoteOf(ctx context.Context) string {
	s, _ := ctx.Value(remoteKey{}).(string)
	return s
}

// AuditListIn is the payload of audit.list.
type AuditListIn struct {
	Actor  string `json:"actor,omitzero"`
	Action string `json:"action,omitzero"`
	Target string `json:"target,omitzero"`
	Since  string `json:"since,omitzero"`
	Until  string `json:"until,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

func auditTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, kanban.FieldError(field, "must be an RFC 3339 time")
	}
	return t.UTC(), nil
}

var _ = declare(Def[AuditListIn, *kanban.List[kanban.AuditEntry]]{
	Name:   kanban.ActionAuditList,
	Tool:   "list_audit_entries_kandev",
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"actor":  schema.Str(`Only entries of this actor: "operator" or "session:<session id>".`).Len(1, kanban.MaxAuditActorLen),
		"action": schema.Str("Only entries of this action (a dotted name such as task.move).").Pattern(`^[a-z_]+(\.[a-z_]+)*$`).Len(1, kanban.MaxAuditActionLen),
		"target": idProp("Only entries that name this entity id."),
		"since":  schema.Str("Only entries at or after this time (RFC 3339).").Format("date-time").Len(1, kanban.MaxTimestampLen),
		"until":  schema.Str("Only entries before this time (RFC 3339).").Format("date-time").Len(1, kanban.MaxTimestampLen),
	})),
	Run: func(s *Service, ctx context.Context, _ Principal, in AuditListIn) (*kanban.List[kanban.AuditEntry], error) {
		since, err := auditTime("since", in.Since)
		if err != nil {
			return nil, err
		}
		until, err := auditTime("until", in.Until)
		if err != nil {
			return nil, err
		}
		return s.store.ListAudit(ctx, kanban.AuditFilter{Actor: in.Actor, Action: kanban.Action(in.Action), Target: in.Target,
			Since: since, Until: until, Page: kanban.Page{Limit: in.Limit, Cursor: in.Cursor}})
	},
})
