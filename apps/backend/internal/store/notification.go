package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A workspace's notification inbox (notifications) and which kinds it
// records (notification_settings). A notification is recorded once per
// event (its dedup key), whichever backend saw the event.

const notificationCols = `id, workspace_id, kind, task_id, session_id, title, body, dedup_key, read_at, created_at`

func scanNotification(r rowSource) (*kanban.Notification, error) {
	var n kanban.Notification
	var created string
	var read sql.NullString
	if err := r.Scan(&n.ID, &n.WorkspaceID, &n.Kind, &n.TaskID, &n.SessionID, &n.Title, &n.Body, &n.DedupKey, &read, &created); err != nil {
		return nil, err
	}
	n.ReadAt, n.CreatedAt = parseTimePtr(read), parseTime(created)
	return &n, nil
}

// AddNotification records n (its title and body clipped to their bounds)
// unless the workspace has one with its dedup key. NOT_FOUND when the
// workspace is missing.
func (s *Store) AddNotification(ctx context.Context, n kanban.Notification) (*kanban.Notification, bool, error) {
	if !n.Kind.Valid() {
		return nil, false, kanban.FieldError("kind", "is not a notification kind")
	}
	if err := kanban.CheckLine("dedup_key", n.DedupKey, true, kanban.MaxNotificationDedupLen); err != nil {
		return nil, false, err
	}
	n.Title = kanban.Clip(n.Title, kanban.MaxNotificationTitleLen)
	n.Body = kanban.Clip(n.Body, kanban.MaxNotificationBodyLen)
	n.ID, n.CreatedAt, n.ReadAt = kanban.NewID(), kanban.Now(), nil
	created := false
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workspaces", "workspace", n.WorkspaceID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO notifications (`+notificationCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?) ON CONFLICT (workspace_id, dedup_key) DO NOTHING`,
			n.ID, n.WorkspaceID, string(n.Kind), n.TaskID, n.SessionID, n.Title, n.Body, n.DedupKey, fmtTime(n.CreatedAt))
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		created = k == 1
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("add notification: %w", err)
	}
	return &n, created, nil
}

var notificationListing = listing[kanban.Notification]{what: "list notifications",
	selectFrom: `SELECT ` + notificationCols + ` FROM notifications`, scan: scanNotification, cols: []string{"created_at", "id"}, desc: true,
	key: func(n kanban.Notification) []any { return []any{fmtTime(n.CreatedAt), n.ID} }}

// ListNotifications lists a workspace's inbox, newest first, with its
// unread count. NOT_FOUND when the workspace is missing.
func (s *Store) ListNotifications(ctx context.Context, workspaceID string, unreadOnly bool, p kanban.Page) (*kanban.NotificationList, error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	where := `workspace_id = ?`
	if unreadOnly {
		where += ` AND read_at IS NULL`
	}
	l, err := notificationListing.page(ctx, s.stmts, p, where, workspaceID)
	if err != nil {
		return nil, err
	}
	out := &kanban.NotificationList{List: *l}
	out.Unread, err = unreadCount(ctx, s.stmts, workspaceID)
	return out, err
}

func unreadCount(ctx context.Context, q queryer, workspaceID string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifications WHERE workspace_id = ? AND read_at IS NULL`, workspaceID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count unread notifications: %w", err)
	}
	return n, nil
}

// MarkNotificationsRead marks ids of the workspace read (or, with all,
// every unread one). Ids of another workspace or unknown ids mark
// nothing. NOT_FOUND when the workspace is missing.
func (s *Store) MarkNotificationsRead(ctx context.Context, workspaceID string, ids []string, all bool) (*kanban.NotificationsRead, error) {
	if !all && len(ids) == 0 {
		return nil, kanban.FieldError("ids", "name at least one notification, or set all")
	}
	if len(ids) > kanban.MaxReadIDs {
		return nil, kanban.FieldError("ids", "at most %d", kanban.MaxReadIDs)
	}
	out := &kanban.NotificationsRead{WorkspaceID: workspaceID, IDs: ids, All: all}
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workspaces", "workspace", workspaceID); err != nil {
			return err
		}
		where, args := `workspace_id = ? AND read_at IS NULL`, []any{fmtTime(kanban.Now()), workspaceID}
		if !all {
			where += ` AND id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `)`
			for _, id := range ids {
				args = append(args, id)
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE notifications SET read_at = ? WHERE `+where, args...)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return err
		}
		out.Marked = int(k)
		out.Unread, err = unreadCount(ctx, tx, workspaceID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("mark notifications read: %w", err)
	}
	return out, nil
}

// NotifySettings returns whether the workspace's inbox records each kind
// (a kind without a row: it does). NOT_FOUND when the workspace is missing.
func (s *Store) NotifySettings(ctx context.Context, workspaceID string) ([]kanban.NotifySetting, error) {
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	off := map[kanban.NotificationKind]bool{}
	rows, err := scanAll(ctx, s.stmts, func(r rowSource) (*kanban.NotifySetting, error) {
		var st kanban.NotifySetting
		var inbox int
		if err := r.Scan(&st.Kind, &inbox); err != nil {
			return nil, err
		}
		st.Inbox = inbox != 0
		return &st, nil
	}, `SELECT kind, inbox FROM notification_settings WHERE workspace_id = ?`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("notification settings: %w", err)
	}
	for _, r := range rows {
		off[r.Kind] = !r.Inbox
	}
	out := make([]kanban.NotifySetting, len(kanban.NotificationKinds))
	for i, k := range kanban.NotificationKinds {
		out[i] = kanban.NotifySetting{Kind: k, Inbox: !off[k]}
	}
	return out, nil
}

// SetNotifySetting sets whether the workspace's inbox records a kind.
func (s *Store) SetNotifySetting(ctx context.Context, workspaceID string, st kanban.NotifySetting) error {
	if !st.Kind.Valid() {
		return kanban.FieldError("kind", "is not a notification kind")
	}
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workspaces", "workspace", workspaceID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notification_settings (workspace_id, kind, inbox) VALUES (?, ?, ?)
			ON CONFLICT (workspace_id, kind) DO UPDATE SET inbox = excluded.inbox`, workspaceID, string(st.Kind), boolInt(st.Inbox))
		return err
	})
	if err != nil {
		return fmt.Errorf("set notification setting: %w", err)
	}
	return nil
}
