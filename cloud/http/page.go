package http

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/storeprint/storeprint"
)

// web holds the HQ dashboard; every asset is embedded, nothing is loaded
// from elsewhere.
//
//go:embed web
var web embed.FS

// csp allows nothing but this origin.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pageRoutes serves the dashboard at / and its assets at /assets/. The
// page holds no data: it reads /v1/dashboard with the token the person
// signed in with.
func (s *Server) pageRoutes(mux *http.ServeMux) {
	root, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	assets, err := fs.Sub(root, "assets")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(assets)
	headers := func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("Cache-Control", "no-cache")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		http.ServeFileFS(w, r, root, "index.html")
	})
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Files only: no directory listings, and the API's JSON 404.
		if fi, err := fs.Stat(assets, strings.TrimSuffix(r.URL.Path, "/")); err != nil || fi.IsDir() {
			s.writeError(w, r, storeprint.Errorf(storeprint.ENOTFOUND, "no asset %q", r.URL.Path))
			return
		}
		headers(w)
		files.ServeHTTP(w, r)
	})))
}
