package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kandev/kandev/apps/backend/internal/chrome"
)

// screenshots, when set, is the directory the browser tests write the
// docs' PNG screenshots to (make board-screenshots).
var screenshots = flag.String("screenshots", "", "write the board docs' screenshots (PNG) to this directory")

var (
	browserOnce sync.Once
	browser     *chrome.Browser
	browserErr  error
)

// closeBrowser stops the shared browser once the tests ran (TestMain).
func closeBrowser() {
	if browser != nil {
		browser.Close()
	}
}

// tab is one browser tab on a test backend's board.
type tab struct {
	t   *testing.T
	e   *env
	ctx context.Context
}

// newTab opens a tab of the shared headless Chromium. Without Chromium
// the test is skipped, unless KANDEV_BROWSER_TESTS=1 (make test) makes a
// missing browser a failure.
func newTab(t *testing.T, e *env) *tab {
	t.Helper()
	browserOnce.Do(func() { browser, browserErr = chrome.Start(context.Background()) })
	if browserErr != nil {
		if os.Getenv("KANDEV_BROWSER_TESTS") == "1" {
			t.Fatalf("browser tests: %v", browserErr)
		}
		t.Skipf("browser tests skipped: %v", browserErr)
	}
	ctx, cancel := browser.Tab()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel() })
	b := &tab{t: t, e: e, ctx: ctx}
	b.do(chromedp.EmulateViewport(1280, 800))
	return b
}

func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// js evaluates an expression (promises awaited) and decodes its value.
func (b *tab) js(expr string, out any) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[json.RawMessage](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("evaluate %s: decode %s: %v", expr, raw, err)
		}
	}
}

func (b *tab) str(expr string) string {
	b.t.Helper()
	var s string
	b.js(expr, &s)
	return s
}

// until polls a boolean expression until it is true (bounded).
func (b *tab) until(what, cond string) {
	b.t.Helper()
	b.untilFor(what, cond, 15*time.Second)
}

// untilFor is until with its own bound, for what waits on a poller (the
// PR watcher's next round) rather than on the page.
func (b *tab) untilFor(what, cond string, bound time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(bound)
	for {
		var ok bool
		raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[json.RawMessage](fmt.Sprintf("!!(%s)", cond)))
		if err == nil && json.Unmarshal(raw, &ok) == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s (%s); page: %s", what, cond, b.str(`document.querySelector('main') ? document.querySelector('main').innerText.slice(0, 800) : document.body.innerText.slice(0, 800)`))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// open navigates to a board route and waits until it has rendered.
func (b *tab) open(hash, view string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.e.url + "/" + hash))
	b.until(view+" rendered", fmt.Sprintf(`document.body.dataset.view === %q && document.getElementById('main').dataset.ready === '1'`, view))
}

// signIn signs in with the operator token and waits for the board.
func (b *tab) signIn() {
	b.t.Helper()
	b.do(chromedp.Navigate(b.e.url + "/"))
	b.until("the sign-in form", `document.getElementById('token')`)
	b.do(chromedp.SetValue(chromedp.ID("token"), b.e.token), chromedp.Submit(chromedp.ID("token")))
	b.until("the board", `document.body.dataset.view === 'board' && document.getElementById('main').dataset.ready === '1'`)
}

// click clicks the element a CSS selector names, through the page.
func (b *tab) click(sel string) {
	b.t.Helper()
	var ok bool
	b.js(fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.click(); return true; })()`, sel), &ok)
	if !ok {
		b.t.Fatalf("no element %s to click", sel)
	}
}

// set sets a form control's value.
func (b *tab) set(sel, value string) {
	b.t.Helper()
	var ok bool
	b.js(fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.value = %q; return true; })()`, sel, value), &ok)
	if !ok {
		b.t.Fatalf("no control %s", sel)
	}
}

// center returns the viewport centre of an element.
func (b *tab) center(sel string) (float64, float64) {
	b.t.Helper()
	var p struct{ X, Y float64 }
	b.js(fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.scrollIntoView({block: 'center'}); const r = el.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + Math.min(r.height / 2, 20)}; })()`, sel), &p)
	return p.X, p.Y
}

// drag drags with the real mouse from one element to another.
func (b *tab) drag(from, to string) {
	b.t.Helper()
	x0, y0 := b.center(from)
	x1, y1 := b.center(to)
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MouseMoved, x0, y0),
		chromedp.MouseEvent(chromedp.MousePressed, x0, y0, chromedp.ButtonLeft, chromedp.ClickCount(1))}
	for i := 1; i <= 10; i++ {
		f := float64(i) / 10
		steps = append(steps, chromedp.MouseEvent(chromedp.MouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f, chromedp.ButtonLeft, buttons(1)))
	}
	steps = append(steps, chromedp.MouseEvent(chromedp.MouseReleased, x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	b.do(steps...)
}

func buttons(n int64) chromedp.MouseOption {
	return func(p *input.DispatchMouseEventParams) { p.Buttons = n }
}

// shot writes a screenshot of the viewport for the docs when
// -screenshots is set.
func (b *tab) shot(name string) { b.t.Helper(); b.capture(name, chromedp.CaptureScreenshot()) }

// shotPage is shot of the whole page, beyond the viewport.
func (b *tab) shotPage(name string) { b.t.Helper(); b.capture(name, chromedp.FullScreenshot(100)) }

func (b *tab) capture(name string, a chromedp.Action[[]byte]) {
	b.t.Helper()
	if *screenshots == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// keyShift presses a key with Shift held on the focused element.
func keyShift(key string) chromedp.Action[chromedp.Void] {
	return chromedp.KeyEvent(keyCode(key), chromedp.KeyModifiers(chromedp.ModifierShift))
}

func keyCode(name string) string {
	switch name {
	case "ArrowRight":
		return kb.ArrowRight
	case "ArrowLeft":
		return kb.ArrowLeft
	case "ArrowUp":
		return kb.ArrowUp
	case "ArrowDown":
		return kb.ArrowDown
	case "Enter":
		return kb.Enter
	}
	return name
}
