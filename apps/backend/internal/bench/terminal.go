package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// TerminalBench is section 14: the operator's terminal, keystroke to
// echo, on loopback. A real `kandev serve` runs /bin/sh for a task in its
// checkout; a WebSocket client on /terminal (the operator's token, as the
// board's terminal) writes one byte and reads until its echo comes back —
// written by the terminal's line discipline, so the figure is the path
// through the backend and the WebSocket. Baseline, in the same run: the
// same keystrokes on a bare pseudo-terminal running /bin/sh in process.
type TerminalBench struct {
	Echo    LatencyStat `json:"echo"`
	BarePTY LatencyStat `json:"bare_pty"`
}

const (
	terminalKeys = 400
	// terminalLine is how many keys are typed before the line is erased
	// (Ctrl-U), so the shell never runs what was typed.
	terminalLine = 50
)

// keyIO is one terminal's keystroke round: send one byte, read until the
// output holds it.
type keyIO interface {
	send(b []byte) error
	until(b byte) error
}

// MeasureTerminal runs section 14.
func MeasureTerminal(ctx context.Context, cfg Config) (*TerminalBench, error) {
	dir, err := mkdir(cfg, "terminal")
	if err != nil {
		return nil, err
	}
	checkout, err := mkdir(cfg, "terminal-checkout")
	if err != nil {
		return nil, err
	}
	be, err := startBackendWith(ctx, cfg, "serve-terminal", dir, "--launch-agents=false", "--source-roots", cfg.WorkDir, "--terminal-shell", "/bin/sh")
	if err != nil {
		return nil, err
	}
	defer be.stop()
	wsTerm, err := openBenchTerminal(ctx, be, checkout)
	if err != nil {
		return nil, err
	}
	defer wsTerm.close()
	bare, err := openBarePTY(checkout)
	if err != nil {
		return nil, err
	}
	defer bare.close()
	echo, err := timeKeys(wsTerm)
	if err != nil {
		return nil, fmt.Errorf("terminal echo: %w", err)
	}
	base, err := timeKeys(bare)
	if err != nil {
		return nil, fmt.Errorf("bare pty echo: %w", err)
	}
	out := &TerminalBench{Echo: Latency(echo), BarePTY: Latency(base)}
	cfg.Logf("terminal: keystroke echo p50 %.3f ms (bare pty %.3f ms)", out.Echo.P50Ms, out.BarePTY.P50Ms)
	return out, nil
}

// timeKeys types terminalKeys keys one at a time, each timed from the
// write to its echo; each line of terminalLine keys is then erased and a
// marker awaited (untimed), so the next key's echo is unambiguous.
func timeKeys(k keyIO) ([]time.Duration, error) {
	samples := make([]time.Duration, 0, terminalKeys)
	for i := range terminalKeys {
		key := byte('a' + i%26)
		start := time.Now()
		if err := k.send([]byte{key}); err != nil {
			return nil, err
		}
		if err := k.until(key); err != nil {
			return nil, err
		}
		samples = append(samples, time.Since(start))
		if (i+1)%terminalLine == 0 {
			if err := k.send([]byte{0x15, '#'}); err != nil { // Ctrl-U, then a marker
				return nil, err
			}
			if err := k.until('#'); err != nil {
				return nil, err
			}
			if err := k.send([]byte{0x15}); err != nil {
				return nil, err
			}
		}
	}
	return samples, nil
}

// wsTerminal is a terminal of the backend over its WebSocket.
type wsTerminal struct{ c *websocket.Conn }

func openBenchTerminal(ctx context.Context, be *backendProc, checkout string) (*wsTerminal, error) {
	c, err := ws.Dial(ctx, ws.ClientConfig{URL: "ws" + strings.TrimPrefix(be.base, "http") + "/ws", Token: be.token})
	if err != nil {
		return nil, err
	}
	no := false
	var created action.TaskCreateOut
	err = c.Call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Terminal bench", LocalPath: checkout, BaseBranch: "main", StartAgent: &no}, &created)
	_ = c.Close()
	if err != nil {
		return nil, err
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(be.base, "http")+"/terminal",
		http.Header{"Authorization": {"Bearer " + be.token}})
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	t := &wsTerminal{c: conn}
	hello, _ := json.Marshal(map[string]any{"type": "open", "task_id": created.Task.ID, "cols": 120, "rows": 40})
	if err := conn.WriteMessage(websocket.TextMessage, hello); err != nil {
		t.close()
		return nil, err
	}
	_, msg, err := conn.ReadMessage()
	if err != nil {
		t.close()
		return nil, fmt.Errorf("open the terminal: %w", err)
	}
	if !bytes.Contains(msg, []byte(`"ready"`)) {
		t.close()
		return nil, fmt.Errorf("open the terminal: %s", msg)
	}
	return t, settle(t)
}

// settle types a marker and waits for its echo before the first key
// (the keys timed are letters; neither the marker nor a prompt is one).
func settle(k keyIO) error {
	if err := k.send([]byte{'#'}); err != nil {
		return err
	}
	if err := k.until('#'); err != nil {
		return err
	}
	return k.send([]byte{0x15})
}

func (t *wsTerminal) send(b []byte) error { return t.c.WriteMessage(websocket.BinaryMessage, b) }

func (t *wsTerminal) until(b byte) error {
	_ = t.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		kind, msg, err := t.c.ReadMessage()
		if err != nil {
			return err
		}
		if kind == websocket.TextMessage {
			return fmt.Errorf("terminal: %s", msg)
		}
		if bytes.IndexByte(msg, b) >= 0 {
			return nil
		}
	}
}

func (t *wsTerminal) close() { _ = t.c.Close() }

// barePTY is /bin/sh on a pseudo-terminal in process: the baseline.
type barePTY struct {
	cmd *exec.Cmd
	f   *os.File
	buf []byte
}

func openBarePTY(dir string) (*barePTY, error) {
	cmd := exec.Command("/bin/sh")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TERM=xterm-256color"}
	f, err := pty.Start(cmd)
	if err != nil {
		return nil, err
	}
	p := &barePTY{cmd: cmd, f: f, buf: make([]byte, 16<<10)}
	return p, settle(p)
}

func (p *barePTY) send(b []byte) error { _, err := p.f.Write(b); return err }

func (p *barePTY) until(b byte) error {
	for {
		n, err := p.f.Read(p.buf)
		if bytes.IndexByte(p.buf[:n], b) >= 0 {
			return nil
		}
		if err != nil {
			return errors.Join(errors.New("bare pty closed"), err)
		}
	}
}

func (p *barePTY) close() {
	_ = p.cmd.Process.Kill()
	_, _ = p.cmd.Process.Wait()
	_ = p.f.Close()
}

// writeTerminal renders section 14.
func writeTerminal(b *strings.Builder, r *Results) {
	b.WriteString("## 14. The terminal\n\n")
	b.WriteString("Keystroke to echo in the operator's [terminal](terminal.md), on loopback: a real `kandev serve` runs " +
		"/bin/sh for a task; a WebSocket client on `/terminal` with the operator's token writes one byte and reads until " +
		"its echo is back (the terminal's line discipline echoes it). Baseline, in the same run: the same keys on a bare " +
		"pseudo-terminal running /bin/sh in process.\n\n")
	t := r.Terminal
	if t == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	b.WriteString("| path | p50 / p99 | keys |\n|---|---|---|\n")
	fmt.Fprintf(b, "| backend and WebSocket | %.3f / %.3f ms | %d |\n", t.Echo.P50Ms, t.Echo.P99Ms, t.Echo.Samples)
	fmt.Fprintf(b, "| bare pseudo-terminal | %.3f / %.3f ms | %d |\n\n", t.BarePTY.P50Ms, t.BarePTY.P99Ms, t.BarePTY.Samples)
}

// terminalTargets is section 14's target.
func terminalTargets(r *Results) []Target {
	if r.Terminal == nil {
		return nil
	}
	return []Target{atMost("14", "terminal keystroke echo on loopback (p50)", r.Terminal.Echo.P50Ms, maxTerminalEchoMs, "ms")}
}
