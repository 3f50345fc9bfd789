package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kandev/kandev/apps/backend/internal/chrome"
)

// changesTabLoads is how many times section 12 opens the Changes tab.
const changesTabLoads = 5

// measureChangesTab serves the rig's change with kandev serve (its data
// dir, the repository's directory as the source root) and opens the
// task's page in headless Chromium; each of changesTabLoads times, on a
// freshly loaded page, it clicks the Changes tab and times to the page's
// changes-rendered mark. It returns the median in milliseconds.
func measureChangesTab(ctx context.Context, cfg Config, rig *changesRig) (float64, error) {
	be, err := startBackendWith(ctx, cfg, "serve-changes", rig.data, "--launch-agents=false", "--source-roots", rig.root)
	if err != nil {
		return 0, err
	}
	defer be.stop()
	br, err := chrome.Start(ctx)
	if err != nil {
		return 0, err
	}
	defer br.Close()
	tab, cancel := br.Tab()
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 5*time.Minute)
	defer cancelT()
	if err := signIn(tab, be.base, be.token); err != nil {
		return 0, err
	}
	if err := chromedp.Do(tab, chromedp.Navigate(be.base+"/#/task/"+rig.task)); err != nil {
		return 0, err
	}
	var times []float64
	for i := range changesTabLoads {
		if i > 0 {
			if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
				return 0, err
			}
		}
		if _, err := waitNumber(tab, `document.body.dataset.view === 'task' && document.getElementById('main').dataset.ready === '1' ? 1 : null`); err != nil {
			return 0, err
		}
		ms, err := chromedp.Run(tab, chromedp.Evaluate[*float64](clickChangesTab, chromedp.EvalAwaitPromise))
		if err != nil {
			return 0, err
		}
		if ms == nil {
			return 0, fmt.Errorf("the Changes tab was not drawn within 30 s")
		}
		n, err := waitNumber(tab, `document.querySelectorAll('#panel-changes .file').length`)
		if err != nil {
			return 0, err
		}
		if n < 100 {
			return 0, fmt.Errorf("the Changes tab shows %v files, want its first page of 100", n)
		}
		times = append(times, *ms)
	}
	return Median(times), be.alive()
}

// clickChangesTab clicks the tab and resolves to the milliseconds until
// the changes-rendered mark (null after 30 s).
const clickChangesTab = `(async () => {
	performance.clearMarks('changes-rendered');
	const t0 = performance.now();
	document.getElementById('tab-changes').click();
	for (let i = 0; i < 6000; i += 1) {
		const m = performance.getEntriesByName('changes-rendered')[0];
		if (m) return m.startTime - t0;
		await new Promise((r) => setTimeout(r, 5));
	}
	return null;
})()`
