package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// BackupSchedule is serve's scheduled SQLite backups (off when Every is
// zero): one backup every Every into Dir, the newest Keep kept.
type BackupSchedule struct {
	Every time.Duration
	Dir   string
	Keep  int
}

// Bounds of a backup schedule (serve's --backup-* flags).
const (
	minBackupEvery  = time.Minute
	maxBackupEvery  = 7 * 24 * time.Hour
	maxBackupKeep   = 1000
	defaultKeep     = 7
	backupTimeLimit = time.Hour // one backup's longest run, then it is cancelled
	// backupTimeFloor is the least time a backup is given, however short
	// the interval (ten intervals, else).
	backupTimeFloor = time.Minute
)

// backupName matches exactly the names the scheduler gives its backups;
// retention removes no other file.
var backupName = regexp.MustCompile(`^kandev-backup-\d{8}T\d{6}\.\d{3}Z\.db$`)

// scheduledName is the backup file name for a backup taken at t.
func scheduledName(t time.Time) string {
	return "kandev-backup-" + t.UTC().Format("20060102T150405.000Z") + ".db"
}

// validate checks the schedule's bounds; database is serve's --database.
func (s BackupSchedule) validate(database string) error {
	if s.Every == 0 {
		return nil
	}
	if database != "" {
		return errors.New("serve: --backup-every backs up the SQLite database; back up PostgreSQL with pg_dump (see docs/public/operations.md)")
	}
	if s.Every < minBackupEvery || s.Every > maxBackupEvery {
		return fmt.Errorf("serve: --backup-every must be between %s and %s", minBackupEvery, maxBackupEvery)
	}
	if s.Keep < 1 || s.Keep > maxBackupKeep {
		return fmt.Errorf("serve: --backup-keep must be from 1 to %d", maxBackupKeep)
	}
	return nil
}

// backupScheduler takes the scheduled backups of the SQLite database src.
type backupScheduler struct {
	sched BackupSchedule
	src   string
	log   *slog.Logger
	// taken, when set, hears the result of each backup (tests).
	taken func(error)
}

// run takes a backup every sched.Every until ctx ends, each on its own
// read-only connection (serving is never blocked: readers and the
// writers of WAL go on), one at a time (a tick that comes during a
// backup is dropped), each bounded by backupTimeLimit. A failure is
// logged and the schedule goes on.
func (b *backupScheduler) run(ctx context.Context) {
	tick := time.NewTicker(b.sched.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := b.once(ctx, time.Now())
		if err != nil && ctx.Err() == nil {
			b.log.Error("scheduled backup failed", "dir", b.sched.Dir, "err", err)
		}
		if b.taken != nil {
			b.taken(err)
		}
	}
}

// once takes one backup and then applies retention.
func (b *backupScheduler) once(ctx context.Context, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, min(backupTimeLimit, max(b.sched.Every*10, backupTimeFloor)))
	defer cancel()
	if err := os.MkdirAll(b.sched.Dir, 0o700); err != nil {
		return fmt.Errorf("backup dir: %w", err)
	}
	info, err := store.BackupSQLite(ctx, b.src, filepath.Join(b.sched.Dir, scheduledName(now)))
	if err != nil {
		return err
	}
	b.log.Info("scheduled backup", "path", info.Path, "bytes", info.Bytes, "schema_version", info.SchemaVersion)
	removed, err := pruneBackups(b.sched.Dir, b.sched.Keep)
	for _, r := range removed {
		b.log.Info("removed an old backup", "path", r)
	}
	return err
}

// pruneBackups removes the oldest of dir's scheduled backups (files
// named by scheduledName, so they sort by age) beyond the newest keep,
// and returns the paths it removed. Other files are left alone.
func pruneBackups(dir string, keep int) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	var ours []string
	for _, e := range es {
		if e.Type().IsRegular() && backupName.MatchString(e.Name()) {
			ours = append(ours, e.Name())
		}
	}
	slices.Sort(ours)
	var removed []string
	var errs []error
	for len(ours) > keep {
		p := filepath.Join(dir, ours[0])
		ours = ours[1:]
		if err := os.Remove(p); err != nil {
			errs = append(errs, fmt.Errorf("retention: %w", err))
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// runBackups starts the scheduled backups when configured; they stop with
// the backend's lifetime.
func (b *backend) runBackups() {
	sched := b.cfg.Backup
	if sched.Every == 0 {
		return
	}
	bs := &backupScheduler{sched: sched, src: filepath.Join(b.cfg.DataDir, store.DatabaseFile), log: b.log}
	done := make(chan struct{})
	go func() {
		defer close(done)
		bs.run(b.life.ctx)
	}()
	b.life.push("backups", func(ctx context.Context) error {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return errors.New("a scheduled backup did not stop in time")
		}
	})
}
