package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/leadgate/leadgate/views"
)

// Assets serves embedded static files under content-hashed URLs
// (/static/css/app.3f9a1c2e.css) with a year-long immutable cache: a new
// build changes the hash, so browsers never see a stale stylesheet.
type Assets struct {
	byURL  map[string]asset  // "/static/css/app.<hash>.css" -> file
	byName map[string]string // "css/app.css" -> URL
}

type asset struct {
	body  []byte
	ctype string
}

// NewAssets reads every file of fsys once and computes its hashed URL.
func NewAssets(fsys fs.FS) (*Assets, error) {
	a := &Assets{byURL: map[string]asset{}, byName: map[string]string{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(name)
		url := "/static/" + strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		ctype := mime.TypeByExtension(ext)
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		a.byURL[url] = asset{body: body, ctype: ctype}
		a.byName[name] = url
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: static assets: %w", err)
	}
	for _, need := range []string{"css/app.css", "js/htmx.min.js", "js/app.js"} {
		if a.byName[need] == "" {
			return nil, fmt.Errorf("web: static asset %s is missing", need)
		}
	}
	return a, nil
}

// URL returns the hashed URL of an embedded file ("" when unknown).
func (a *Assets) URL(name string) string { return a.byName[name] }

// Views returns the URLs the page layout links to.
func (a *Assets) Views() views.Assets {
	return views.Assets{CSS: a.URL("css/app.css"), HTMX: a.URL("js/htmx.min.js"), App: a.URL("js/app.js")}
}

// ServeHTTP answers GET/HEAD /static/...; unknown or outdated hashes are 404.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, ok := a.byURL[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
