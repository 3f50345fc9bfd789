package mockagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Bounds of the directives that change the working directory.
const (
	// MaxWriteBytes bounds the text one @write writes.
	MaxWriteBytes = 1 << 20
	// DefaultShTimeout bounds one @sh command (Options.ShTimeout).
	DefaultShTimeout = 60 * time.Second
	// MaxShOutput bounds the output of one @sh command that is kept and
	// reported (the rest is read and dropped, so the command never
	// blocks on a full pipe).
	MaxShOutput = 64 << 10
	// shWaitDelay bounds the wait for a killed command's pipes.
	shWaitDelay = 2 * time.Second
)

// write performs "@write PATH TEXT": TEXT (with \n, \t and \\ escapes) to
// PATH inside the session's working directory, parent directories made.
// PATH must be relative, without "." or ".." parts, and not in .git; it
// is opened through os.Root, so no symbolic link leads out.
func (t *turn) write(arg string) {
	path, text, _ := strings.Cut(arg, " ")
	data := unescape(text)
	if err := checkRelPath(path); err != nil {
		t.say("mock agent: @write: " + err.Error())
		return
	}
	if len(data) > MaxWriteBytes {
		t.say(fmt.Sprintf("mock agent: @write: the text is larger than %d bytes", MaxWriteBytes))
		return
	}
	id := t.callID("write")
	t.update(acp.StartToolCall(id, "Write "+path, acp.WithStartKind(acp.ToolKindEdit), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}})))
	if err := writeIn(t.s.cwd, path, []byte(data)); err != nil {
		t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		t.say("mock agent: @write " + path + ": " + err.Error())
		return
	}
	t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateRawOutput(fmt.Sprintf("wrote %d bytes", len(data)))))
}

// checkRelPath refuses a path that is not plainly inside the directory.
func checkRelPath(p string) error {
	switch {
	case p == "":
		return errors.New("needs a path")
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return errors.New("the path must be relative to the working directory")
	case strings.ContainsAny(p, "\x00\\"):
		return errors.New("the path must not contain NUL or backslashes")
	}
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "", ".", "..":
			return errors.New(`the path must not have empty, "." or ".." parts`)
		}
	}
	if first, _, _ := strings.Cut(p, "/"); first == ".git" {
		return errors.New("the path must not be in .git")
	}
	return nil
}

// writeIn writes data to rel inside dir through os.Root.
func writeIn(dir, rel string, data []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return errors.New("the working directory cannot be opened")
	}
	defer func() { _ = root.Close() }()
	if parent := filepath.Dir(rel); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return reason(err)
		}
	}
	return reason(root.WriteFile(rel, data, 0o644))
}

// reason says why a file operation failed without the absolute paths
// os errors carry.
func reason(err error) error {
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"):
		return errors.New("the path leads out of the working directory (a symbolic link)")
	case errors.As(err, &pe):
		return errors.New(pe.Err.Error())
	}
	return errors.New("the file could not be written")
}

// unescape turns \n, \t and \\ into a newline, a tab and a backslash;
// other backslashes stay.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sh performs "@sh COMMAND": sh -c COMMAND in the session's working
// directory, its stdin empty, bounded in time (Options.ShTimeout: then its
// whole process group is killed, and so is it when the turn is cancelled)
// and in the output kept (MaxShOutput of stdout and stderr together).
func (t *turn) sh(command string) {
	if strings.TrimSpace(command) == "" {
		t.say("mock agent: @sh needs a command")
		return
	}
	id := t.callID("sh")
	t.update(acp.StartToolCall(id, "sh -c "+clip(command, 200), acp.WithStartKind(acp.ToolKindExecute),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartRawInput(map[string]any{"command": command})))
	limit := t.a.opts.ShTimeout
	if limit <= 0 {
		limit = DefaultShTimeout
	}
	ctx, cancel := context.WithTimeout(t.ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command) // #nosec G204 -- running the prompt's command is what @sh is for
	cmd.Dir = t.s.cwd
	out := &boundedBuffer{max: MaxShOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = shWaitDelay
	processGroup(cmd)
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	text := out.String()
	if out.dropped > 0 {
		text += fmt.Sprintf("\n[… %d more bytes of output dropped]", out.dropped)
	}
	switch {
	case t.ctx.Err() != nil: // the turn was cancelled: the group is killed, the turn ends
		t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed), acp.WithUpdateRawOutput(map[string]any{"output": text})))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed), acp.WithUpdateRawOutput(map[string]any{"output": text})))
		t.say("mock agent: @sh: the command ran longer than " + limit.String() + ": its process group was killed")
	case err != nil && code < 0:
		t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed), acp.WithUpdateRawOutput(map[string]any{"output": text})))
		t.say("mock agent: @sh: the command could not run")
	default:
		status := acp.ToolCallStatusCompleted
		if code != 0 {
			status = acp.ToolCallStatusFailed
		}
		t.update(acp.UpdateToolCall(id, acp.WithUpdateStatus(status), acp.WithUpdateRawOutput(map[string]any{"exit_code": code, "output": text})))
		if code != 0 {
			t.say("mock agent: @sh: the command exited with status " + strconv.Itoa(code))
		}
	}
}

// boundedBuffer keeps the first max bytes written and counts the rest.
type boundedBuffer struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	keep := min(len(p), b.max-b.buf.Len())
	b.buf.Write(p[:keep])
	b.dropped += len(p) - keep
	return len(p), nil
}

func (b *boundedBuffer) String() string { return strings.ToValidUTF8(b.buf.String(), "\uFFFD") }
