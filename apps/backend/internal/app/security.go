package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ratelimit"
)

// Defaults of the audit log's retention.
const (
	DefaultAuditRetention = 90 * 24 * time.Hour
	defaultAuditSweep     = time.Hour
)

// SecurityConfig is the audit log's retention and the callers' rate
// limits (see docs/public/users-and-security.md).
type SecurityConfig struct {
	// Limits bound each caller's calls and writes on this backend
	// (--rate-calls, --rate-call-burst, --rate-writes,
	// --rate-write-burst). Zero rates: no limit (kandev serve defaults to
	// ratelimit.Default).
	Limits ratelimit.Config
	// AuditRetention is how long audit entries are kept
	// (--audit-retention); zero keeps every entry. AuditSweep is how
	// often older ones are deleted (default 1h).
	AuditRetention time.Duration
	AuditSweep     time.Duration
	// SecretsKey (KANDEV_SECRETS_KEY) or SecretsKeyFile
	// (--secrets-key-file) is the named secrets' key; neither: the data
	// dir's secrets.key (see secretsKey).
	SecretsKey     string
	SecretsKeyFile string
}

// securityFlags adds serve's rate limit and audit flags.
func securityFlags(fs *flag.FlagSet) func() (SecurityConfig, error) {
	d := ratelimit.Default()
	calls := fs.Float64("rate-calls", d.Calls.Rate, "action and tool calls per second one caller (the operator token, an agent session) may make on this backend; 0: no limit")
	callBurst := fs.Int("rate-call-burst", d.Calls.Burst, "calls one caller may make at once before --rate-calls applies")
	writes := fs.Float64("rate-writes", d.Writes.Rate, "state-changing calls per second one caller may make on this backend; 0: no limit")
	writeBurst := fs.Int("rate-write-burst", d.Writes.Burst, "writes one caller may make at once before --rate-writes applies")
	keep := fs.Duration("audit-retention", DefaultAuditRetention, "how long audit log entries are kept; 0 keeps every entry")
	keyFile := fs.String("secrets-key-file", os.Getenv("KANDEV_SECRETS_KEY_FILE"), "the named secrets' AES-256 key: 64 hex digits, mode 0600 "+
		"(env KANDEV_SECRETS_KEY_FILE, or the key itself in KANDEV_SECRETS_KEY; default DATA_DIR/secrets.key, created on first start)")
	return func() (SecurityConfig, error) {
		if *calls < 0 || *writes < 0 || *callBurst < 1 || *writeBurst < 1 || *calls > 1e6 || *writes > 1e6 {
			return SecurityConfig{}, errors.New("serve: --rate-calls and --rate-writes must be between 0 and 1000000, their bursts at least 1")
		}
		if *keep < 0 || (*keep > 0 && *keep < time.Hour) {
			return SecurityConfig{}, errors.New("serve: --audit-retention must be 0 (keep every entry) or at least 1h")
		}
		return SecurityConfig{Limits: ratelimit.Config{Calls: ratelimit.Limit{Rate: *calls, Burst: *callBurst},
			Writes: ratelimit.Limit{Rate: *writes, Burst: *writeBurst}}, AuditRetention: *keep,
			SecretsKey: os.Getenv("KANDEV_SECRETS_KEY"), SecretsKeyFile: *keyFile}, nil
	}
}

// newLimits is the backend's rate limiter (nil: no limit).
func newLimits(cfg SecurityConfig) *ratelimit.Limiter {
	l := ratelimit.New(cfg.Limits)
	if l.Off() {
		return nil
	}
	return l
}

// operatorKey is the operator token's bucket key (action.Principal.Actor).
const operatorKey = "operator"

// rateLimited answers an external MCP request with 429 and Retry-After
// while the operator token's call rate is spent, before mcp-go reads it;
// a call that gets through still spends its token in the registry.
func (b *backend) rateLimited(next http.Handler) http.Handler {
	if b.limits == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wait := b.limits.Peek(operatorKey); wait > 0 {
			e := kanban.RateLimited("calls", wait)
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = fmt.Fprintf(w, `{"code":%q,"message":%q,"details":{"retry_after":%d}}`, e.Code, e.Message, e.RetryAfter)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// runAuditSweep deletes audit entries older than the retention, at start
// and then every sweep interval, until the backend stops.
func (b *backend) runAuditSweep() {
	keep, every := b.cfg.Security.AuditRetention, b.cfg.Security.AuditSweep
	if keep <= 0 {
		return
	}
	if every <= 0 {
		every = defaultAuditSweep
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			n, err := b.store.PruneAudit(b.life.ctx, time.Now().Add(-keep))
			switch {
			case err != nil && b.life.ctx.Err() == nil:
				b.log.Warn("audit: sweep", "err", err)
			case n > 0:
				b.log.Info("audit: entries past retention deleted", slog.Int64("entries", n))
			}
			select {
			case <-b.life.ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	b.life.push("audit sweep", func(ctx context.Context) error {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return errors.New("the audit sweep did not stop in time")
		}
	})
}
