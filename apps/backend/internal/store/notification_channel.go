package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A workspace's outgoing notification channels (notification_channels)
// and the log of what was sent to them (notification_deliveries). A
// channel's URL and secret are read back only by ChannelsFor and
// GetChannel's callers inside the server; every Channel carries them as
// kanban.Secret, which shows "[redacted]" in text and JSON.

const channelCols = `id, workspace_id, name, type, url, secret, events, enabled, created_at, updated_at`

func scanChannel(r rowSource) (*kanban.Channel, error) {
	var c kanban.Channel
	var u, secret, events, created, updated string
	var enabled int
	if err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Type, &u, &secret, &events, &enabled, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &c.Events); err != nil {
		return nil, fmt.Errorf("channel events: %w", err)
	}
	c.URL, c.Secret, c.URLHint, c.HasSecret = kanban.NewSecret(u), kanban.NewSecret(secret), kanban.URLHint(u), secret != ""
	c.Enabled, c.CreatedAt, c.UpdatedAt = enabled != 0, parseTime(created), parseTime(updated)
	return &c, nil
}

func eventsJSON(ks []kanban.NotificationKind) string {
	if ks == nil {
		ks = []kanban.NotificationKind{}
	}
	b, _ := json.Marshal(ks) // strings: cannot fail
	return string(b)
}

// CreateChannel stores a checked channel (kanban.CheckChannel). NOT_FOUND
// when the workspace is missing; CONFLICT when it has
// MaxChannelsPerWorkspace channels.
func (s *Store) CreateChannel(ctx context.Context, c kanban.Channel) (*kanban.Channel, error) {
	if err := kanban.CheckChannel(c); err != nil {
		return nil, err
	}
	now := kanban.Now()
	c.ID, c.CreatedAt, c.UpdatedAt = kanban.NewID(), now, now
	c.URLHint, c.HasSecret = kanban.URLHint(c.URL.Reveal()), c.Secret.Set()
	if c.Events == nil {
		c.Events = []kanban.NotificationKind{}
	}
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workspaces", "workspace", c.WorkspaceID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_channels WHERE workspace_id = ?`, c.WorkspaceID).Scan(&n); err != nil {
			return err
		}
		if n >= kanban.MaxChannelsPerWorkspace {
			return kanban.Errorf(kanban.CodeConflict, "a workspace has at most %d notification channels", kanban.MaxChannelsPerWorkspace)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notification_channels (`+channelCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.WorkspaceID, c.Name, string(c.Type), c.URL.Reveal(), c.Secret.Reveal(), eventsJSON(c.Events), boolInt(c.Enabled),
			fmtTime(now), fmtTime(now))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create channel: %w", err)
	}
	return &c, nil
}

// GetChannel returns a channel (NOT_FOUND when missing).
func (s *Store) GetChannel(ctx context.Context, id string) (*kanban.Channel, error) {
	c, err := scanChannel(s.stmts.QueryRowContext(ctx, `SELECT `+channelCols+` FROM notification_channels WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "notification channel")
	}
	return c, nil
}

var channelListing = listing[kanban.Channel]{what: "list notification channels",
	selectFrom: `SELECT ` + channelCols + ` FROM notification_channels`, scan: scanChannel, cols: []string{"created_at", "id"},
	key: func(c kanban.Channel) []any { return []any{fmtTime(c.CreatedAt), c.ID} }}

// ListChannels lists a workspace's channels, oldest first. NOT_FOUND
// when the workspace is missing.
func (s *Store) ListChannels(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.Channel], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	return channelListing.page(ctx, s.stmts, p, `workspace_id = ?`, workspaceID)
}

// UpdateChannel changes the fields of u that are set, checked as a whole
// (kanban.CheckChannel). NOT_FOUND when the channel is missing.
func (s *Store) UpdateChannel(ctx context.Context, id string, u kanban.ChannelUpdate) (*kanban.Channel, error) {
	var out *kanban.Channel
	err := s.tx(ctx, func(tx txn) error {
		c, err := scanChannel(tx.QueryRowContext(ctx, `SELECT `+channelCols+` FROM notification_channels WHERE id = ?`, id))
		if err != nil {
			return notFound(err, "notification channel")
		}
		setIf(&c.Name, u.Name)
		setIf(&c.Enabled, u.Enabled)
		setIf(&c.URL, u.URL)
		setIf(&c.Secret, u.Secret)
		if u.Events != nil {
			c.Events = u.Events
		}
		if err := kanban.CheckChannel(*c); err != nil {
			return err
		}
		c.UpdatedAt, c.URLHint, c.HasSecret = kanban.Now(), kanban.URLHint(c.URL.Reveal()), c.Secret.Set()
		if _, err := tx.ExecContext(ctx, `UPDATE notification_channels SET name = ?, url = ?, secret = ?, events = ?, enabled = ?, updated_at = ?
			WHERE id = ?`, c.Name, c.URL.Reveal(), c.Secret.Reveal(), eventsJSON(c.Events), boolInt(c.Enabled), fmtTime(c.UpdatedAt), id); err != nil {
			return err
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update channel: %w", err)
	}
	return out, nil
}

// DeleteChannel deletes a channel and its delivery log (NOT_FOUND when
// missing).
func (s *Store) DeleteChannel(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM notification_channels WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return notFoundIfNone(err, "notification channel")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete channel: %w", err)
	}
	return nil
}

func notFoundIfNone(err error, kind string) error {
	if err != nil {
		return err
	}
	return kanban.NotFound(kind)
}

// ChannelsFor returns the enabled channels of a workspace subscribed to
// kind, with their URL and secret, oldest first (at most
// MaxChannelsPerWorkspace exist).
func (s *Store) ChannelsFor(ctx context.Context, workspaceID string, kind kanban.NotificationKind) ([]kanban.Channel, error) {
	all, err := scanAll(ctx, s.stmts, scanChannel, `SELECT `+channelCols+` FROM notification_channels
		WHERE workspace_id = ? AND enabled = 1 ORDER BY created_at, id`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("channels for: %w", err)
	}
	var out []kanban.Channel
	for _, c := range all {
		for _, k := range c.Events {
			if k == kind {
				out = append(out, c)
				break
			}
		}
	}
	return out, nil
}
