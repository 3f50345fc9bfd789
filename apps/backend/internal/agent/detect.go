package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Detection bounds: a probe's time, how much of its stdout is read, and
// how many probes run at once.
const (
	defaultProbeTimeout = 45 * time.Second
	probeOutputLimit    = 1 << 20
	probeParallel       = 4
)

// detector caches, per agent type, whether it is installed here and what
// its ACP sessions offered. A refresh probes every type again.
type detector struct {
	m       *Manager
	refresh sync.Mutex // one refresh at a time

	loadOnce sync.Once // the offers the database keeps, read by the first Detect

	mu      sync.Mutex
	checked map[string]kanban.AgentDetection // by type name: the probe's part
	offered map[string]kanban.AgentOffer
}

func newDetector(m *Manager) *detector {
	return &detector{m: m, checked: map[string]kanban.AgentDetection{}, offered: map[string]kanban.AgentOffer{}}
}

// Detect returns every agent type's detection, in table order, probing
// them first when refresh is set or when they were never probed.
func (m *Manager) Detect(ctx context.Context, refresh bool) []kanban.AgentDetection {
	d := m.detect
	d.load(ctx)
	if refresh || !d.fresh() {
		d.probeAll(ctx, refresh)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]kanban.AgentDetection, 0, len(m.cfg.Types))
	for _, t := range m.cfg.Types {
		det, ok := d.checked[t.Name]
		if !ok {
			det = describe(t)
		}
		if o, ok := d.offered[t.Name]; ok {
			at := o.OfferedAt
			det.Models, det.Modes, det.OfferedAt = slices.Clone(o.Models), slices.Clone(o.Modes), &at
		}
		out = append(out, det)
	}
	return out
}

// fresh reports whether every type was probed.
func (d *detector) fresh() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.checked) == len(d.m.cfg.Types)
}

// probeAll probes every type, probeParallel at a time. Without force, a
// caller that waited for another's probes takes their results.
func (d *detector) probeAll(ctx context.Context, force bool) {
	d.refresh.Lock()
	defer d.refresh.Unlock()
	if !force && d.fresh() {
		return
	}
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for _, t := range d.m.cfg.Types {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			det := d.m.probe(ctx, t)
			if ctx.Err() != nil {
				return // the caller left: a cut-short probe is no result
			}
			d.mu.Lock()
			d.checked[t.Name] = det
			d.mu.Unlock()
		}()
	}
	wg.Wait()
}

// offerWrite bounds the write of an offer to the database.
const offerWrite = 5 * time.Second

// observe records the models and modes an agent's ACP session offered,
// and keeps them in the database when they changed (so that a restarted
// backend offers them before the agent's next session).
func (d *detector) observe(ctx context.Context, name string, c *modelChoice, modes *acp.SessionModeState) {
	o := kanban.AgentOffer{Agent: name, OfferedAt: time.Now().UTC()}
	if c != nil {
		for i, id := range c.ids {
			o.Models = append(o.Models, kanban.AgentModel{ID: id, Name: c.names[i]})
		}
	}
	if modes != nil {
		for _, md := range modes.AvailableModes {
			o.Modes = append(o.Modes, string(md.Id))
		}
	}
	o = kanban.ClipOffer(o)
	d.mu.Lock()
	prev, seen := d.offered[name]
	d.offered[name] = o
	d.mu.Unlock()
	if seen && slices.Equal(prev.Models, o.Models) && slices.Equal(prev.Modes, o.Modes) && o.OfferedAt.Sub(prev.OfferedAt) < time.Hour {
		return // unchanged: its stored time is at most an hour old
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), offerWrite)
	defer cancel()
	if err := d.m.store.SetAgentOffer(wctx, o); err != nil {
		d.m.log.Warn("agent: keep what the agent offered", "agent", name, "code", kanban.ErrorCode(err))
	}
}

// load reads the offers the database keeps, once, for the types no
// session of this backend offered yet.
func (d *detector) load(ctx context.Context) {
	d.loadOnce.Do(func() {
		names := make([]string, 0, len(d.m.cfg.Types))
		for _, t := range d.m.cfg.Types {
			names = append(names, t.Name)
		}
		names = names[:min(len(names), kanban.MaxLimit)]
		offers, err := d.m.store.AgentOffers(ctx, names)
		if err != nil {
			d.m.log.Warn("agent: read what agents offered", "code", kanban.ErrorCode(err))
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, o := range offers {
			if _, ok := d.offered[o.Agent]; !ok {
				d.offered[o.Agent] = o
			}
		}
	})
}

// describe is t's metadata with an unknown status.
func describe(t Type) kanban.AgentDetection {
	det := kanban.AgentDetection{Name: t.Name, DisplayName: t.DisplayName, Method: t.Detect(), Command: t.Command.Path,
		Args: SafeArgs(t.Command.Args), Package: t.Package, Install: t.Install, ModelEnv: slices.Clone(t.ModelEnv),
		ModelVar: t.ModelVar, Custom: t.Custom, Status: kanban.AgentUnknown}
	if len(t.ModelFlag) > 0 {
		det.ModelFlag = t.ModelFlag[0]
	}
	if det.Command == selfCommand {
		det.Command = "kandev"
	}
	return det
}

// probe tells whether t is installed: its binary on PATH (for a native
// one), then an ACP initialize of its launch, bounded in time and output,
// run in a throwaway directory; its process group is killed after.
func (m *Manager) probe(ctx context.Context, t Type) kanban.AgentDetection {
	det := describe(t)
	now := time.Now().UTC()
	det.CheckedAt = &now
	notInstalled := func(why string) kanban.AgentDetection {
		det.Status, det.Detail = kanban.AgentNotInstalled, why
		return det
	}
	c := t.probeCommand()
	path := c.Path
	if path == selfCommand {
		path = m.cfg.Executable
	}
	look := path
	if t.Binary != "" {
		look = t.Binary
	}
	if _, err := exec.LookPath(look); err != nil {
		return notInstalled(filepath.Base(look) + " was not found on PATH")
	}
	version, err := m.initializeProbe(ctx, &t, path, c.Args)
	if err != nil {
		return notInstalled(err.Error())
	}
	det.Status, det.Version = kanban.AgentInstalled, kanban.Clip(version, 100)
	return det
}

// initializeProbe starts the command and asks it ACP initialize; it
// returns the version the agent reports.
func (m *Manager) initializeProbe(ctx context.Context, t *Type, path string, args []string) (string, error) {
	dir, err := os.MkdirTemp("", "kandev-probe-")
	if err != nil {
		return "", errors.New("could not create the probe's directory")
	}
	defer func() { _ = os.RemoveAll(dir) }()
	ctx, cancel := context.WithTimeout(ctx, m.cfg.ProbeTimeout)
	defer cancel()
	cmd := exec.Command(path, args...) //nolint:gosec // server-side launch metadata only; no payload reaches it
	cmd.Dir, cmd.Env, cmd.Stderr = dir, m.typeEnv(t, ""), io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", errors.New("could not start the probe")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", errors.New("could not start the probe")
	}
	p, err := startProcess(cmd)
	if err != nil {
		return "", errors.New(filepath.Base(path) + " could not be started")
	}
	defer p.terminate(time.Second)
	conn := acp.NewClientSideConnection(probeClient{}, stdin, io.LimitReader(stdout, probeOutputLimit))
	conn.SetLogger(m.acpLog)
	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "kandev", Version: m.cfg.Version}})
	switch {
	case err == nil:
	case processExited(p):
		return "", errors.New("it exited before answering ACP initialize (not installed, or not an ACP agent)")
	case ctx.Err() != nil:
		return "", errors.New("it did not answer ACP initialize within " + m.cfg.ProbeTimeout.String())
	default:
		return "", errors.New("it did not answer ACP initialize")
	}
	if init.AgentInfo == nil {
		return "", nil
	}
	return init.AgentInfo.Version, nil
}

// probeClient is the client side of a probe: it only ever sends
// initialize, and refuses whatever the agent asks.
type probeClient struct{ *client }

func (probeClient) SessionUpdate(context.Context, acp.SessionNotification) error { return nil }

func (probeClient) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{}, acp.NewMethodNotFound(acp.ClientMethodSessionRequestPermission)
}
