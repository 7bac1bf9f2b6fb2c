// Package webtest drives the pages of `azero serve` in a real browser:
// Debian's chromium, headless, through the DevTools protocol (chromedp).
// It is imported only by tests.
package webtest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/azero-dev/azero/internal/testenv"
)

// Browser starts a headless chromium for the test and returns the context
// of its first tab; the browser ends with the test. Without chromium the
// test is skipped, or fails when AZERO_REQUIRE_TOOLS is set.
func Browser(t *testing.T) context.Context {
	t.Helper()
	path := testenv.RequireTool(t, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		// Tests run as root in containers, where chromium's sandbox
		// cannot start.
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 1600),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Do performs actions in the browser, failing the test after
// testenv.Patience.
func Do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, testenv.Patience)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Text returns the text of the first element sel selects, once visible.
func Text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, testenv.Patience)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

// WaitFor waits until the JavaScript expression is true in the page,
// across the page's reloads and navigations.
func WaitFor(t *testing.T, ctx context.Context, expression string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	var last error
	for time.Now().Before(deadline) {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ok, err := chromedp.Run(actx, chromedp.Evaluate[bool](expression))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, _ := chromedp.Run(dctx, chromedp.Evaluate[string]("document.location.href + '\\n' + (document.body ? document.body.innerText : '')"))
	t.Fatalf("browser: %s never held (%v); the page:\n%s", expression, last, body)
}
