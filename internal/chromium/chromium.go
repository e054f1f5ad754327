package chromium

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeprint/storeprint/internal/testenv"
)

// Path finds the Chromium binary: $CHROMIUM, then chromium on PATH.
func Path() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// New starts a headless Chromium for the test and returns a context for
// chromedp actions; the browser stops when the test ends. Under -short the
// test skips; a missing Chromium skips it too, or fails it in CI
// (internal/testenv; `.ci/run` installs Debian's chromium).
func New(t testing.TB, width, height int) context.Context {
	t.Helper()
	testenv.Short(t, "Chromium")
	path, err := Path()
	if err != nil {
		testenv.Missing(t, "chromium", err, "apt-get install -y chromium, or set CHROMIUM")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// The first action starts the browser; it must run without a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// Within runs browser actions in ctx (from New), failing the test if
// they have not succeeded after d; what says what they were for.
func Within(t testing.TB, ctx context.Context, d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s (within %s): %v", what, d, err)
	}
}

// ExternalRequests returns the URLs the page loaded (documents, scripts,
// styles, fetches) that are not on origin.
func ExternalRequests(ctx context.Context, origin string) ([]string, error) {
	urls, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[location.href, ...performance.getEntriesByType("resource").map(e => e.name)]`))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range urls {
		if len(u) < len(origin) || u[:len(origin)] != origin {
			out = append(out, u)
		}
	}
	return out, nil
}

// Screenshot shows url in a viewport of width×height CSS pixels, waits for
// sel and returns a PNG of that first screen, as a tablet or a phone of
// that size shows it. The viewport stays so for the actions that follow.
func Screenshot(t testing.TB, ctx context.Context, url string, width, height int64, sel string) []byte {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, chromedp.EmulateViewport(width, height), chromedp.Navigate(url), chromedp.WaitVisible(sel)); err != nil {
		t.Fatalf("show %s at %dx%d: %v", url, width, height, err)
	}
	png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot at %dx%d: %v", width, height, err)
	}
	return png
}
