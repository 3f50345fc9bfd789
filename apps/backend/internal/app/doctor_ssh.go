package app

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/remote"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// sshDialTimeout bounds each SSH profile's connection; sshParallel is how
// many profiles are checked at once.
const (
	sshDialTimeout = 10 * time.Second
	sshParallel    = 8
)

// checkSSH connects to the host of each SSH executor profile (bounded,
// several at once) and reports, in profile order, reachable, the host's
// key unknown or changed, the key refused, or the host unreachable, each
// with its fix. It writes nothing: a host unknown to a profile that
// trusts on first use is a warning (its key is recorded at the first
// launch, not by doctor).
func checkSSH(ctx context.Context, profiles []store.ProfileConfig) []checkResult {
	if len(profiles) == 0 {
		return []checkResult{{Name: "ssh", Status: checkSkip, Detail: "no SSH executor has a profile"}}
	}
	out := make([]checkResult, len(profiles))
	sem := make(chan struct{}, sshParallel)
	var wg sync.WaitGroup
	for i, p := range profiles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = checkSSHProfile(ctx, p)
		}()
	}
	wg.Wait()
	return out
}

// checkSSHProfile checks one SSH profile.
func checkSSHProfile(ctx context.Context, p store.ProfileConfig) checkResult {
	r := checkResult{Name: "ssh", Status: checkFail}
	what := "profile " + kanban.Clip(p.Name, 100) + ": "
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(p.Config), &raw); err != nil {
		r.Detail, r.Fix = what+"its config is not a JSON object", "update the profile's config (update_executor_profile_kandev)"
		return r
	}
	cfg, err := kanban.ParseSSHConfig(raw)
	if err != nil {
		r.Detail, r.Fix = what+"its config is invalid: "+err.Error(), "update the profile's config (update_executor_profile_kandev)"
		return r
	}
	dest := cfg.User + "@" + cfg.Addr()
	probe := *cfg
	probe.TrustOnFirstUse = false // doctor records no key
	c, err := remote.Dial(ctx, &probe, sshDialTimeout)
	if err == nil {
		_ = c.Close()
		r.Status, r.Detail = checkOK, what+dest+" is reachable, its host key matches the known_hosts file and it accepts the key"
		return r
	}
	r.Detail = what + dest + ": " + err.Error()
	port := strconv.Itoa(cfg.Port)
	switch {
	case errors.Is(err, remote.ErrHostKeyUnknown) && cfg.TrustOnFirstUse:
		r.Status = checkWarn
		r.Detail = what + dest + ": the host is not in the known_hosts file yet; its key will be recorded at the first launch (trust_on_first_use)"
		r.Fix = "check the key's fingerprint, or record it now: ssh-keyscan -p " + port + " " + cfg.Host + " >> " + cfg.KnownHostsFile
	case errors.Is(err, remote.ErrHostKeyUnknown):
		r.Fix = "record the host's key after checking its fingerprint: ssh-keyscan -p " + port + " " + cfg.Host + " >> " + cfg.KnownHostsFile +
			" (or set trust_on_first_use)"
	case errors.Is(err, remote.ErrHostKeyMismatch):
		r.Fix = "if the host was reinstalled, drop its old key (ssh-keygen -R '[" + cfg.Host + "]:" + port + "' -f " + cfg.KnownHostsFile +
			") and record the new one after checking its fingerprint; otherwise find out who answers in its place"
	case errors.Is(err, remote.ErrAuth):
		r.Fix = "add the public key of " + cfg.KeyFile + " to ~" + cfg.User + "/.ssh/authorized_keys on the host"
	case errors.Is(err, remote.ErrKeyFile):
		r.Fix = "point key_file at an unencrypted private key that only kandev's user can read (chmod 600)"
	case errors.Is(err, remote.ErrKnownHosts):
		r.Fix = "point known_hosts_file at a readable known_hosts file (ssh-keyscan -p " + port + " " + cfg.Host + " > FILE makes one)"
	default:
		r.Fix = "check the host and port, that sshd runs there and that this machine reaches it"
	}
	return r
}
