//go:build proof

package e2e

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// axeVersion is the axe-core release the accessibility scan injects. It
// comes from the npm registry through npm itself and is cached outside the
// repository: the product never serves it.
const axeVersion = "4.10.3"

// phoneWidth is the narrow viewport every page must fit without scrolling sideways.
const (
	phoneWidth  = 390
	phoneHeight = 844
)

// axeScript returns axe.min.js, packing it with npm on first use and caching
// it under the user cache (or $LEADGATE_AXE_CACHE).
func axeScript(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LEADGATE_AXE_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache folder for axe-core: %v", err)
		}
		dir = filepath.Join(base, "leadgate-e2e")
	}
	path := filepath.Join(dir, "axe-core-"+axeVersion+".min.js")
	if b, err := os.ReadFile(path); err == nil {
		return string(b)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", tmp, "axe-core@"+axeVersion)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fetching axe-core %s with npm (the accessibility scan needs npm and its registry): %v\n%s", axeVersion, err, out)
	}
	src, err := untarFile(filepath.Join(tmp, "axe-core-"+axeVersion+".tgz"), "package/axe.min.js")
	if err != nil {
		t.Fatalf("unpacking axe-core: %v", err)
	}
	part := path + ".part"
	if err := os.WriteFile(part, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(part, path); err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// untarFile reads one file out of a gzipped tarball.
func untarFile(tgz, name string) ([]byte, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("gunzip %s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no %s", tgz, name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", tgz, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// axeFinding is one failed axe rule, trimmed for the log.
type axeFinding struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeRun scans the document for WCAG 2.1 A/AA and best-practice rules.
const axeRun = `axe.run(document, {
	runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']},
	resultTypes: ['violations'],
}).then(r => JSON.stringify(r.violations.map(v => ({
	id: v.id, impact: v.impact || '', help: v.help,
	nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' ' + (n.failureSummary || '').split('\n').slice(1, 2).join('').trim()),
}))))`

// page checks the page on screen as a person with a keyboard, a screen
// reader or a phone meets it, and saves its screenshots when asked: the axe
// scan (logged per page; serious or critical findings fail), every form
// control reachable with Tab, and no sideways scrolling at 390 px.
func (b *browser) page(name string) {
	b.t.Helper()
	b.scan(name)
	b.keyboard(name)
	b.shot(name)
	b.phone(name)
}

// scan injects axe-core and reports its findings.
func (b *browser) scan(name string) {
	b.t.Helper()
	if b.axe == "" {
		b.axe = axeScript(b.t)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`typeof axe === 'object' || (function(){`+b.axe+`; return true})()`)); err != nil {
		b.t.Fatalf("%s: injecting axe-core: %v", name, err)
	}
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: axe run: %v", name, err)
	}
	var found []axeFinding
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		b.t.Fatalf("%s: axe answer %.200q: %v", name, raw, err)
	}
	var blocking []string
	summary := make([]string, 0, len(found))
	for _, f := range found {
		summary = append(summary, f.Impact+":"+f.ID)
		if f.Impact == "serious" || f.Impact == "critical" {
			blocking = append(blocking, fmt.Sprintf("%s %s (%s) at %s", f.Impact, f.ID, f.Help, strings.Join(f.Nodes, " | ")))
		}
	}
	b.t.Logf("axe-core %s scan of %s: %d findings, %d serious or critical %v", axeVersion, name, len(found), len(blocking), summary)
	for _, f := range blocking {
		b.t.Errorf("accessibility, %s: %s", name, f)
	}
}

// keyboardMark tags every visible, enabled control inside a form (one per
// radio group, as Tab stops once per group) and returns how many there are.
const keyboardMark = `(() => {
	const seen = new Set(); let n = 0;
	for (const el of document.querySelectorAll('form input, form select, form textarea, form button')) {
		if (el.type === 'hidden' || el.disabled || !el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
		let key = 'k' + n;
		if (el.type === 'radio') key = 'r:' + (el.form ? [...document.forms].indexOf(el.form) : -1) + ':' + el.name;
		el.dataset.kbd = key;
		if (!seen.has(key)) { seen.add(key); n++; }
	}
	return JSON.stringify([...seen]);
})()`

// keyboard tabs through the page from the top and fails on any form control
// that Tab never reaches.
func (b *browser) keyboard(name string) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](keyboardMark))
	if err != nil {
		b.t.Fatalf("%s: marking controls: %v", name, err)
	}
	var want []string
	_ = json.Unmarshal([]byte(raw), &want)
	missing := map[string]bool{}
	for _, k := range want {
		missing[k] = true
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); true`)); err != nil {
		b.t.Fatalf("%s: focusing the top: %v", name, err)
	}
	for step := 0; len(missing) > 0 && step < 3*len(want)+40; step++ {
		b.do("press Tab", chromedp.KeyEvent("\t"))
		k, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.activeElement && document.activeElement.dataset.kbd) || ''`))
		if err != nil {
			b.t.Fatalf("%s: reading focus: %v", name, err)
		}
		delete(missing, k)
	}
	if len(missing) > 0 {
		var labels []string
		for k := range missing {
			l, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(e => e ? (e.name || e.id || e.outerHTML.slice(0, 80)) : '')(document.querySelector('[data-kbd="`+k+`"]'))`))
			labels = append(labels, l)
		}
		b.t.Errorf("keyboard, %s: Tab never reaches %d of %d form controls: %v", name, len(missing), len(want), labels)
	}
	b.t.Logf("keyboard walk of %s: %d form controls, %d unreachable", name, len(want), len(missing))
}

// overflowing names the widest elements sticking out past the viewport.
const overflowing = `(() => {
	const w = window.innerWidth; const out = [];
	for (const el of document.body.querySelectorAll('*')) {
		const r = el.getBoundingClientRect();
		if (r.right > w + 1 && r.width > 0) out.push(el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + ' ' + Math.round(r.right));
		if (out.length > 8) break;
	}
	return JSON.stringify({scroll: document.documentElement.scrollWidth, inner: w, out});
})()`

// phone re-lays the page at 390 px: nothing may scroll sideways.
func (b *browser) phone(name string) {
	b.t.Helper()
	b.do("phone viewport", chromedp.EmulateViewport(phoneWidth, phoneHeight), chromedp.Sleep(150*time.Millisecond))
	defer b.do("restore the viewport", chromedp.EmulateViewport(viewportWidth, viewportHeight))
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](overflowing))
	if err != nil {
		b.t.Fatalf("%s at %d px: %v", name, phoneWidth, err)
	}
	var got struct {
		Scroll, Inner int
		Out           []string
	}
	_ = json.Unmarshal([]byte(raw), &got)
	if got.Scroll > got.Inner {
		b.t.Errorf("%s at %d px scrolls sideways: scrollWidth %d > innerWidth %d; sticking out: %v", name, phoneWidth, got.Scroll, got.Inner, got.Out)
	}
	b.shotAt(name+"-390", phoneWidth, phoneHeight)
}
