package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// checkGit finds git on PATH and asks its version.
func checkGit(ctx context.Context) checkResult {
	r := checkResult{Name: "git", Fix: "install git (e.g. apt install git) and put it on the PATH kandev serve runs with"}
	path, err := exec.LookPath("git")
	if err != nil {
		r.Status, r.Detail = checkFail, "git was not found on PATH"
		return r
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output() //nolint:gosec // the git found on PATH, fixed arguments
	if err != nil {
		r.Status, r.Detail = checkFail, path+" did not answer --version"
		return r
	}
	r.Status, r.Detail = checkOK, kanban.Clip(strings.TrimSpace(string(out)), 100)+" ("+path+")"
	return r
}

// checkDataDir checks the data dir (or, before the first start, the
// directory it will be created in) is writable, by creating and removing
// a file, and has free space.
func checkDataDir(dir string) []checkResult {
	at, exists := existingDir(dir)
	w := checkResult{Name: "data dir", Status: checkOK, Detail: at + " is writable",
		Fix: "make the data dir writable by the user kandev runs as, or pass --data-dir"}
	if !exists {
		w.Detail = dir + " does not exist yet; serve creates it in " + at + ", which is writable"
	}
	f, err := os.CreateTemp(at, ".kandev-doctor-*")
	if err != nil {
		w.Status, w.Detail = checkFail, at+" is not writable"
	} else {
		_ = f.Close()
		if err := os.Remove(f.Name()); err != nil {
			w.Status, w.Detail = checkFail, "could not remove a file created in "+at
		}
	}
	return []checkResult{w, checkDisk(at)}
}

// dbState is what the database check read, for the checks after it.
type dbState struct {
	in       *store.Inspection // nil when unread (no database, unreachable, another schema)
	postgres bool
}

// checkDatabase reads the database read-only: reachable, and its schema
// version against this binary's.
func checkDatabase(ctx context.Context, cfg doctorConfig) (dbState, []checkResult) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	latest := store.LatestVersion()
	r := checkResult{Name: "database"}
	var st dbState
	var in *store.Inspection
	var where string
	var err error
	if cfg.Database != "" {
		st.postgres, where = true, store.RedactURL(cfg.Database)
		if !store.IsPostgresURL(cfg.Database) {
			r.Status, r.Detail, r.Fix = checkFail, "--database is not a postgres:// URL", "pass postgres://USER@HOST/DB, or no --database for SQLite in the data dir"
			return st, []checkResult{r}
		}
		in, err = store.InspectPostgres(ctx, cfg.Database)
	} else {
		where = filepath.Join(cfg.DataDir, store.DatabaseFile)
		var exists bool
		in, exists, err = store.InspectSQLite(ctx, where)
		if err == nil && !exists {
			r.Status, r.Detail = checkOK, "none at "+where+" yet; serve creates it (schema version "+fmt.Sprint(latest)+")"
			return st, []checkResult{r}
		}
	}
	switch {
	case err != nil:
		r.Status, r.Detail = checkFail, where+" could not be read"
		r.Fix = "check the database is up and reachable from here, the URL's user, password and database, and the file's permissions"
		if ctx.Err() != nil {
			r.Detail = where + " did not answer within " + checkTimeout.String()
		}
	case in.SchemaVersion > latest:
		r.Status, r.Detail = checkFail, fmt.Sprintf("%s has schema version %d, newer than this binary's %d", where, in.SchemaVersion, latest)
		r.Fix = "run the kandev release that wrote it (or a newer one); this binary refuses to serve it"
	case in.SchemaVersion < latest:
		r.Status, r.Detail = checkWarn, fmt.Sprintf("%s has schema version %d, this binary's is %d", where, in.SchemaVersion, latest)
		r.Fix = "kandev serve (or kandev db migrate) applies the newer migrations; take a backup first"
	default:
		r.Status, r.Detail = checkOK, fmt.Sprintf("%s reachable, schema version %d (this binary's)", where, in.SchemaVersion)
		st.in = in
	}
	if in != nil && st.postgres {
		st.in = in // the clock is read whatever the schema
	}
	return st, []checkResult{r}
}

// checkAgents probes every agent type (launch overrides and custom types
// of the agents file applied): an installed one is reported with its
// version; a missing one fails when a workflow, a step or a live session
// uses it, and is only noted otherwise.
func checkAgents(ctx context.Context, cfg doctorConfig, db dbState) []checkResult {
	types, err := agent.LoadTypes(cfg.AgentsFile)
	if err != nil {
		return []checkResult{{Name: "agents", Status: checkFail, Detail: "the agents file could not be loaded",
			Fix: "fix " + cfg.AgentsFile + " (kandev serve refuses it too)"}}
	}
	if len(types) > doctorAgentMax {
		types = types[:doctorAgentMax]
	}
	var used []string
	if db.in != nil {
		used = db.in.UsedAgents
	}
	// Each probe is bounded by doctorProbe and four run at once (a probe
	// through npx can take its whole bound): the check is bounded by that.
	ctx, cancel := context.WithTimeout(ctx, time.Duration((len(types)+3)/4+1)*doctorProbe)
	defer cancel()
	dets := agent.ProbeTypes(ctx, types, agent.ProbeConfig{Executable: cfg.Executable, Version: toolserver.Version, Timeout: doctorProbe})
	out := make([]checkResult, 0, len(dets))
	var unused []string
	for i, d := range dets {
		r := checkResult{Name: "agent", Detail: d.Name}
		switch {
		case d.Status == kanban.AgentInstalled:
			r.Status = checkOK
			r.Detail += " installed" + versionNote(d.Version)
		case slices.Contains(used, d.Name) || types[i].Custom:
			r.Status, r.Detail = checkFail, d.Name+" is not installed: "+d.Detail
			r.Fix = installHint(d)
		default:
			unused = append(unused, d.Name)
			continue
		}
		out = append(out, r)
	}
	if len(unused) > 0 {
		out = append(out, checkResult{Name: "agent", Status: checkSkip,
			Detail: "not installed, and no workflow, step or live session uses them: " + strings.Join(unused, ", ")})
	}
	return out
}

func versionNote(v string) string {
	if v == "" {
		return ""
	}
	return ", version " + v
}

// installHint is how to install a detected agent type.
func installHint(d kanban.AgentDetection) string {
	switch {
	case d.Install != "":
		return d.Install
	case d.Package != "":
		return "install " + d.Package
	}
	return "install " + d.Command + " or fix its command in the agents file"
}

// checkExecutors checks the executors sessions can run on: the Docker
// daemon (DOCKER_HOST) when a Docker executor has a profile; the host of
// each SSH executor profile (doctor_ssh.go); and, on PostgreSQL, the
// clocks of this machine and of the backends against the database's.
func checkExecutors(ctx context.Context, db dbState) []checkResult {
	var types []string
	if db.in != nil {
		types = db.in.ExecutorTypes
	}
	dk := checkResult{Name: "docker", Status: checkSkip, Detail: "no Docker executor has a profile"}
	if slices.Contains(types, kanban.ExecutorTypeDocker) {
		dk = bounded(ctx, checkDocker)
	}
	var ssh []store.ProfileConfig
	if db.in != nil {
		ssh = db.in.SSHProfiles
	}
	out := append([]checkResult{dk}, checkSSH(ctx, ssh)...)
	return append(out, checkClock(db))
}

// checkDocker asks the Docker daemon of DOCKER_HOST (else the default
// socket) its version.
func checkDocker(ctx context.Context) checkResult {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = "the default socket"
	}
	if err := docker.New().Ping(ctx); err != nil {
		return checkResult{Name: "docker", Status: checkFail, Detail: "the Docker daemon at " + host + " did not answer",
			Fix: "install Docker and start dockerd, give kandev's user access to its socket, or set DOCKER_HOST"}
	}
	return checkResult{Name: "docker", Status: checkOK, Detail: "the Docker daemon at " + host + " answers"}
}

// checkClock compares, on PostgreSQL, this machine's clock and each
// backend's last heartbeat with the database's clock: a heartbeat ahead
// of the database's now is a backend whose clock runs ahead (one behind
// cannot be told from a late heartbeat).
func checkClock(db dbState) checkResult {
	r := checkResult{Name: "clock", Fix: "run NTP (e.g. systemd-timesyncd or chrony) on every backend's machine and the database's"}
	if !db.postgres || db.in == nil || db.in.Now.IsZero() {
		r.Status, r.Detail = checkSkip, "clock skew matters between backends of a PostgreSQL database only"
		return r
	}
	local := db.in.Local.Sub(db.in.Now)
	var ahead []string
	for _, b := range db.in.Backends {
		if d := b.Heartbeat.Sub(db.in.Now); d > maxClockSkew {
			ahead = append(ahead, fmt.Sprintf("%s by %s", b.ID, d.Round(time.Millisecond)))
		}
	}
	switch {
	case local > maxClockSkew || local < -maxClockSkew:
		r.Status, r.Detail = checkWarn, "this machine's clock is "+local.Round(time.Millisecond).String()+" off the database's"
	case len(ahead) > 0:
		r.Status, r.Detail = checkWarn, "backends' clocks ahead of the database's: "+strings.Join(ahead, ", ")
	default:
		r.Status = checkOK
		r.Detail = fmt.Sprintf("this machine and %d backend(s) agree with the database's clock within %s", len(db.in.Backends), maxClockSkew)
	}
	return r
}
