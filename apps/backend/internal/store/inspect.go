package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Inspection is what kandev doctor reads of a database, read-only.
type Inspection struct {
	// SchemaVersion is the database's; the other fields are read only
	// when it is this binary's (LatestVersion).
	SchemaVersion int
	// UsedAgents are the agent types (by name) a workflow, a workflow
	// step or a session that has not ended uses, at most 200.
	UsedAgents []string
	// ExecutorTypes are the types of the executors that have a profile
	// (a session can run on them).
	ExecutorTypes []string
	// SSHProfiles are the profiles of SSH executors (name and stored
	// config), by name, at most 50.
	SSHProfiles []ProfileConfig
	// Backends are the backends' lease rows (PostgreSQL), newest
	// heartbeat first, at most 200.
	Backends []BackendBeat
	// Now is the database's clock when it was read (PostgreSQL; zero on
	// SQLite, whose clock is this machine's).
	Now time.Time
	// Local is this machine's clock when Now was read (halfway through
	// the query).
	Local time.Time
}

// ProfileConfig is an executor profile's name and stored config (JSON).
type ProfileConfig struct {
	Name, Config string
}

// BackendBeat is one backend's last heartbeat, written with its clock.
type BackendBeat struct {
	ID        string
	Heartbeat time.Time
}

// The inspection's queries; both engines accept them as written.
const (
	usedAgentsSQL = `SELECT DISTINCT a.name FROM agents a JOIN agent_profiles p ON p.agent_id = a.id
		WHERE p.id IN (SELECT agent_profile_id FROM workflows WHERE agent_profile_id IS NOT NULL)
		   OR p.id IN (SELECT agent_profile_id FROM workflow_steps WHERE agent_profile_id IS NOT NULL)
		   OR p.id IN (SELECT agent_profile_id FROM task_sessions WHERE agent_profile_id IS NOT NULL
		               AND state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED'))
		ORDER BY a.name LIMIT 200`
	executorTypesSQL = `SELECT DISTINCT e.type FROM executors e JOIN executor_profiles p ON p.executor_id = e.id ORDER BY e.type LIMIT 200`
	sshProfilesSQL   = `SELECT p.name, p.config FROM executor_profiles p JOIN executors e ON e.id = p.executor_id
		WHERE e.type = 'ssh' ORDER BY p.name LIMIT 50`
	backendsSQL = `SELECT id, heartbeat_at FROM cluster_backends ORDER BY heartbeat_at DESC LIMIT 200`
)

// InspectSQLite reads the SQLite database at path without writing to it
// (exists is false when there is none).
func InspectSQLite(ctx context.Context, path string) (in *Inspection, exists bool, err error) {
	v, exists, err := SQLiteSchemaVersion(ctx, path)
	if err != nil || !exists {
		return nil, exists, err
	}
	in = &Inspection{SchemaVersion: v}
	if v != LatestVersion() {
		return in, true, nil
	}
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return nil, true, fmt.Errorf("inspect database: %w", err)
	}
	defer func() { _ = db.Close() }()
	return in, true, inspect(ctx, db, in, false)
}

// InspectPostgres reads the PostgreSQL database at rawURL in a read-only
// transaction.
func InspectPostgres(ctx context.Context, rawURL string) (*Inspection, error) {
	cfg, err := ParsePostgresURL(rawURL)
	if err != nil {
		return nil, err
	}
	db := openPGPool(cfg)
	defer func() { _ = db.Close() }()
	v, err := pgSchemaVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	in := &Inspection{SchemaVersion: v}
	before := time.Now()
	if err := db.QueryRowContext(ctx, `SELECT now()`).Scan(&in.Now); err != nil {
		return nil, fmt.Errorf("inspect database: read its clock: %w", err)
	}
	in.Local = before.Add(time.Since(before) / 2)
	if v != LatestVersion() {
		return in, nil
	}
	return in, inspect(ctx, db, in, true)
}

// inspect fills in's lists from db in one read-only transaction.
func inspect(ctx context.Context, db *sql.DB, in *Inspection, backends bool) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("inspect database: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if in.UsedAgents, err = strings1(ctx, tx, usedAgentsSQL); err != nil {
		return fmt.Errorf("inspect database: agents: %w", err)
	}
	if in.ExecutorTypes, err = strings1(ctx, tx, executorTypesSQL); err != nil {
		return fmt.Errorf("inspect database: executors: %w", err)
	}
	if in.SSHProfiles, err = profileConfigs(ctx, tx); err != nil {
		return fmt.Errorf("inspect database: SSH profiles: %w", err)
	}
	if !backends {
		return nil
	}
	rows, err := tx.QueryContext(ctx, backendsSQL)
	if err != nil {
		return fmt.Errorf("inspect database: backends: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var id, at string
		if err := rows.Scan(&id, &at); err != nil {
			return fmt.Errorf("inspect database: backends: %w", err)
		}
		t, err := time.Parse(timeLayout, at)
		if err != nil {
			return errors.New("inspect database: backends: a heartbeat is not a time")
		}
		in.Backends = append(in.Backends, BackendBeat{ID: id, Heartbeat: t})
	}
	return rows.Err()
}

// profileConfigs reads the SSH executors' profiles.
func profileConfigs(ctx context.Context, tx *sql.Tx) ([]ProfileConfig, error) {
	rows, err := tx.QueryContext(ctx, sshProfilesSQL)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []ProfileConfig
	for rows.Next() {
		var p ProfileConfig
		if err := rows.Scan(&p.Name, &p.Config); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// strings1 returns the first column of query's rows.
func strings1(ctx context.Context, tx *sql.Tx, query string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
