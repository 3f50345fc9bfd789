package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// apprise runs the apprise CLI once, bounded by ctx: the URL is passed in
// its environment (APPRISE_URLS), never in its arguments, which other
// local users can read; the body goes on stdin; the process runs in its
// own group, killed with it. Exit 0 delivers; 1 (apprise could not
// notify) and a timeout may succeed later; anything else does not.
func (n *Notifier) apprise(ctx context.Context, j job) outcome {
	bin, err := exec.LookPath(n.cfg.Apprise)
	if err != nil {
		return outcome{status: -1, err: errors.New("apprise is not installed on the backend's machine")}
	}
	u, err := n.appriseURL(ctx, j.ch.URL.Reveal())
	if err != nil {
		return outcome{status: -1, err: err}
	}
	// G204: bin is the operator's configured apprise; the arguments are
	// fixed options whose values are glued to them (--title=…), so no
	// title can read as an option; no shell is involved.
	cmd := exec.CommandContext(ctx, bin, "--title="+oneLine(j.n.Title), "--notification-type="+appriseType(j.n.Kind), //nolint:gosec // G204: see above
		"--input-format=text")
	processGroup(cmd)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "APPRISE_URLS=" + u}
	cmd.Stdin = strings.NewReader(body(j.n))
	// Its output is read and thrown away, never kept or logged: apprise
	// may print the URLs it was given.
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.WaitDelay = waitDelay
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return outcome{}
	case ctx.Err() != nil:
		return outcome{status: -1, retry: true, err: errors.New("apprise did not finish in time")}
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return outcome{status: 1, retry: true, err: errors.New("apprise could not deliver the notification")}
	case errors.As(err, &exit):
		return outcome{status: exit.ExitCode(), err: fmt.Errorf("apprise refused the notification (exit %d)", exit.ExitCode())}
	}
	return outcome{status: -1, err: errors.New("apprise could not be started")}
}

// appriseURL is a channel's URL, or the value of the named secret it
// refers to ("secret:NAME"), which must be an Apprise URL. Errors name the
// secret, never a value.
func (n *Notifier) appriseURL(ctx context.Context, u string) (string, error) {
	name, ok := kanban.SecretRef(u)
	if !ok {
		return u, nil
	}
	if n.cfg.Secret == nil {
		return "", errors.New("the channel's URL refers to secret " + name + ", but this backend has no secrets")
	}
	v, err := n.cfg.Secret(ctx, u)
	if err != nil {
		return "", fmt.Errorf("the channel's URL refers to secret %s, which could not be read (%s)", name, kanban.ErrorCode(err))
	}
	if _, again := kanban.SecretRef(v); again || kanban.CheckChannelURL(kanban.ChannelApprise, v) != nil {
		return "", errors.New("secret " + name + " does not hold an Apprise URL")
	}
	return v, nil
}

// body is the notification's text for Apprise: its body, or its title.
func body(n kanban.Notification) string {
	if n.Body != "" {
		return n.Body
	}
	return n.Title
}

// oneLine keeps a title one line (it is an argument; --title=… keeps a
// leading "-" from reading as an option).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func appriseType(k kanban.NotificationKind) string {
	switch k {
	case kanban.NotifyTaskFailed:
		return "failure"
	case kanban.NotifyTurnFinished:
		return "success"
	case kanban.NotifyQuestionAsked, kanban.NotifyPermissionNeeded:
		return "warning"
	}
	return "info"
}
