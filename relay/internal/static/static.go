// Package static serves the relay's files (the widget, the example pages)
// from an fs.FS: the precompressed sibling (name.br, name.gz) that
// Accept-Encoding allows, exact content types, strong ETags, and caching
// forever for content-hashed names.
package static

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ErrorWriter writes an error response in the relay's format.
type ErrorWriter func(w http.ResponseWriter, code int, typ, msg string)

// Files serves fsys; with index, a directory serves its index.html.
func Files(fsys fs.FS, index bool, writeError ErrorWriter) http.Handler {
	return &staticFiles{fsys: fsys, index: index, writeError: writeError, etags: map[string]string{}}
}

// hashedName matches content-hashed asset names such as
// trickle.3f9a1c2b.wasm: they never change, so they may be cached forever.
var hashedName = regexp.MustCompile(`\.[0-9a-f]{8,}\.[A-Za-z0-9]+$`)

// staticFiles serves an fs.FS with precompressed siblings (name.br,
// name.gz) chosen by Accept-Encoding, exact content types and cache rules.
type staticFiles struct {
	fsys  fs.FS
	index bool // serve index.html for directories

	writeError ErrorWriter

	mu    sync.Mutex
	etags map[string]string
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".wasm":
		return "application/wasm"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".json", ".map":
		return "application/json"
	case ".md":
		return "text/markdown; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// accepts reports whether an Accept-Encoding header allows coding (a
// q=0 refuses it).
func accepts(header, coding string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), coding) {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

func (h *staticFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "relay: static files are read-only")
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "."
	}
	if st, err := fs.Stat(h.fsys, name); err == nil && st.IsDir() {
		if !h.index {
			http.NotFound(w, r)
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/") {
			// A relative Location, which the browser resolves against the
			// URL it asked for: http.Redirect would make it absolute from
			// r.URL.Path, which StripPrefix has cut ("/examples/chat"
			// went to "/chat/").
			w.Header().Set("Location", "./"+path.Base(r.URL.Path)+"/")
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		name = path.Join(name, "index.html")
	}
	if strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz") {
		// The compressed siblings are served through content negotiation.
		if _, err := fs.Stat(h.fsys, strings.TrimSuffix(strings.TrimSuffix(name, ".br"), ".gz")); err == nil {
			http.NotFound(w, r)
			return
		}
	}
	if _, err := fs.Stat(h.fsys, name); err != nil {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", contentType(name))
	hdr.Set("X-Content-Type-Options", "nosniff")
	if hashedName.MatchString(name) {
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hdr.Set("Cache-Control", "no-cache")
	}
	hdr.Add("Vary", "Accept-Encoding")
	file, encoding := name, ""
	ae := r.Header.Get("Accept-Encoding")
	for _, c := range []struct{ coding, ext string }{{"br", ".br"}, {"gzip", ".gz"}} {
		if !accepts(ae, c.coding) {
			continue
		}
		if _, err := fs.Stat(h.fsys, name+c.ext); err == nil {
			file, encoding = name+c.ext, c.coding
			break
		}
	}
	data, err := fs.ReadFile(h.fsys, file)
	if err != nil {
		h.writeError(w, http.StatusInternalServerError, "server_error", "relay: reading "+file+": "+err.Error())
		return
	}
	if encoding != "" {
		hdr.Set("Content-Encoding", encoding)
	}
	hdr.Set("ETag", h.etag(file, data))
	// ServeContent handles If-None-Match, HEAD and ranges; the modification
	// time of embedded files is unknown, hence the zero time.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

func (h *staticFiles) etag(file string, data []byte) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.etags[file]; ok {
		return e
	}
	sum := sha256.Sum256(data)
	e := `"` + hex.EncodeToString(sum[:12]) + `"`
	h.etags[file] = e
	return e
}
