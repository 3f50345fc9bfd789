// Package chrome starts the machine's headless Chromium (Debian's
// /usr/bin/chromium, never a downloaded browser) for the board's browser
// tests and benchmarks, driven over the DevTools protocol with chromedp.
//
// It imports only the standard library and chromedp; nothing of Kandev.
package chrome

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// DefaultPath is where Debian's chromium package installs the browser.
const DefaultPath = "/usr/bin/chromium"

// ErrMissing is returned by Path when no Chromium is installed.
var ErrMissing = errors.New("chromium is not installed (make browser installs Debian's chromium package)")

// Path returns the browser to run: $KANDEV_CHROMIUM, else DefaultPath.
func Path() (string, error) {
	p := os.Getenv("KANDEV_CHROMIUM")
	if p == "" {
		p = DefaultPath
	}
	if _, err := exec.LookPath(p); err != nil {
		return "", ErrMissing
	}
	return p, nil
}

// Browser is one running headless Chromium with a throw-away profile.
type Browser struct {
	ctx         context.Context // the browser's first tab; new tabs derive from it
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
}

// Start launches Chromium, which runs until ctx ends or Close. The flags
// keep it off the network (this machine has none: background requests
// would fail by the dozen) and disable the sandbox when running as root,
// which Chromium requires.
func Start(ctx context.Context) (*Browser, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kandev-chromium-")
	if err != nil {
		return nil, fmt.Errorf("chromium profile dir: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(dir), chromedp.Headless, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true), chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.WindowSize(1280, 800),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	return &Browser{ctx: ctx, cancel: cancel, cancelAlloc: func() { cancelAlloc(); _ = os.RemoveAll(dir) }}, nil
}

// Tab opens a new tab; cancel closes it.
func (b *Browser) Tab() (context.Context, context.CancelFunc) {
	return chromedp.NewContext(b.ctx)
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() {
	b.cancel()
	b.cancelAlloc()
}
