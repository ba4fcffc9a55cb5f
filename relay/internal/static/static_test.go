package static

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

var files = fstest.MapFS{
	"index.html":              {Data: []byte("<h1>home</h1>")},
	"trickle.js":              {Data: []byte("export {}")},
	"trickle.js.br":           {Data: []byte("BR")},
	"trickle.js.gz":           {Data: []byte("GZ")},
	"trickle.3f9a1c2b.wasm":   {Data: []byte("\x00asm")},
	"style.css":               {Data: []byte("p{}")},
	"notes.md":                {Data: []byte("# hi")},
	"data.bin.x":              {Data: []byte{1}},
	"orphan.txt.gz":           {Data: []byte("only compressed")},
	"examples/index.html":     {Data: []byte("<h1>examples</h1>")},
	"examples/chat/page.html": {Data: []byte("chat")},
}

// errs records what the relay's error writer was asked to write.
type errs struct{ codes []int }

func (e *errs) write(w http.ResponseWriter, code int, typ, msg string) {
	e.codes = append(e.codes, code)
	w.WriteHeader(code)
	io.WriteString(w, typ+": "+msg)
}

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func TestEachFileIsServedWithItsExactTypeAndCacheRule(t *testing.T) {
	h := Files(files, true, (&errs{}).write)
	for _, tc := range []struct {
		path, ctype, cache, body string
	}{
		{"/trickle.js", "text/javascript; charset=utf-8", "no-cache", "export {}"},
		{"/trickle.3f9a1c2b.wasm", "application/wasm", "public, max-age=31536000, immutable", "\x00asm"},
		{"/style.css", "text/css; charset=utf-8", "no-cache", "p{}"},
		{"/notes.md", "text/markdown; charset=utf-8", "no-cache", "# hi"},
		{"/data.bin.x", "application/octet-stream", "no-cache", "\x01"},
		{"/examples/chat/page.html", "text/html; charset=utf-8", "no-cache", "chat"},
		{"/examples/../trickle.js", "text/javascript; charset=utf-8", "no-cache", "export {}"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, tc.path, nil)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, tc.ctype, rec.Header().Get("Content-Type"))
			require.Equal(t, tc.cache, rec.Header().Get("Cache-Control"))
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			require.Equal(t, "Accept-Encoding", rec.Header().Get("Vary"))
			require.Empty(t, rec.Header().Get("Content-Encoding"))
			require.Equal(t, tc.body, rec.Body.String())
		})
	}
}

func TestTheCompressedSiblingIsServedWhenTheClientTakesIt(t *testing.T) {
	h := Files(files, true, (&errs{}).write)
	for _, tc := range []struct {
		accept, encoding, body string
	}{
		{"", "", "export {}"},
		{"gzip, deflate, br", "br", "BR"},
		{"gzip", "gzip", "GZ"},
		{"br;q=0, gzip", "gzip", "GZ"},
		{"BR; q=0.8", "br", "BR"},
		{"br;q=0.000, gzip; q = 0", "", "export {}"},
		{"identity", "", "export {}"},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, "/trickle.js", map[string]string{"Accept-Encoding": tc.accept})
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, tc.encoding, rec.Header().Get("Content-Encoding"))
			require.Equal(t, tc.body, rec.Body.String())
			require.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"), "the type of what it decodes to")
		})
	}
}

func TestETagsAreStrongPerEncodingAndAnswerNotModified(t *testing.T) {
	h := Files(files, true, (&errs{}).write)
	plain := get(t, h, http.MethodGet, "/trickle.js", nil).Header().Get("ETag")
	br := get(t, h, http.MethodGet, "/trickle.js", map[string]string{"Accept-Encoding": "br"}).Header().Get("ETag")
	require.Regexp(t, `^"[0-9a-f]{24}"$`, plain)
	require.NotEqual(t, plain, br, "each representation has its own")
	require.Equal(t, plain, get(t, h, http.MethodGet, "/trickle.js", nil).Header().Get("ETag"), "stable")

	rec := get(t, h, http.MethodGet, "/trickle.js", map[string]string{"If-None-Match": plain})
	require.Equal(t, http.StatusNotModified, rec.Code)
	require.Empty(t, rec.Body.String())
}

func TestHeadAndRangesWorkAsNetHTTPDoes(t *testing.T) {
	h := Files(files, true, (&errs{}).write)
	rec := get(t, h, http.MethodHead, "/trickle.js", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, rec.Body.String())
	require.Equal(t, "9", rec.Header().Get("Content-Length"))
	rec = get(t, h, http.MethodGet, "/trickle.js", map[string]string{"Range": "bytes=0-5"})
	require.Equal(t, http.StatusPartialContent, rec.Code)
	require.Equal(t, "export", rec.Body.String())
}

func TestDirectoriesServeTheirIndexOnlyWhenAskedTo(t *testing.T) {
	h := Files(files, true, (&errs{}).write)
	rec := get(t, h, http.MethodGet, "/", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "<h1>home</h1>", rec.Body.String())
	rec = get(t, h, http.MethodGet, "/examples/", nil)
	require.Equal(t, "<h1>examples</h1>", rec.Body.String())
	rec = get(t, h, http.MethodGet, "/examples", nil)
	require.Equal(t, http.StatusMovedPermanently, rec.Code)
	require.Equal(t, "/examples/", rec.Header().Get("Location"))
	rec = get(t, h, http.MethodGet, "/examples/chat/", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "a directory without an index")

	noIndex := Files(files, false, (&errs{}).write)
	require.Equal(t, http.StatusNotFound, get(t, noIndex, http.MethodGet, "/examples/", nil).Code)
	require.Equal(t, http.StatusNotFound, get(t, noIndex, http.MethodGet, "/", nil).Code)
}

func TestWhatIsNotAFileToServeIsNotFound(t *testing.T) {
	h := Files(files, true, (&errs{}).write)
	for _, p := range []string{"/missing.js", "/trickle.js.br", "/trickle.js.gz", "/../index.html.gz"} {
		require.Equal(t, http.StatusNotFound, get(t, h, http.MethodGet, p, nil).Code, p)
	}
	rec := get(t, h, http.MethodGet, "/orphan.txt.gz", nil)
	require.Equal(t, http.StatusOK, rec.Code, "a .gz with no plain sibling is a file of its own")
	require.Equal(t, "only compressed", rec.Body.String())
}

func TestStaticFilesAreReadOnly(t *testing.T) {
	e := &errs{}
	h := Files(files, true, e.write)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := get(t, h, m, "/trickle.js", nil)
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
		require.Equal(t, "method_not_allowed: relay: static files are read-only", rec.Body.String())
	}
	require.Equal(t, []int{405, 405, 405}, e.codes)
}

func TestAFileThatCannotBeReadIsTheRelaysError(t *testing.T) {
	e := &errs{}
	broken := brokenFS{files}
	rec := get(t, Files(broken, true, e.write), http.MethodGet, "/trickle.js", map[string]string{"Accept-Encoding": "br"})
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Contains(t, rec.Body.String(), "server_error: relay: reading trickle.js.br")
}

// brokenFS lists its files but cannot read the brotli ones.
type brokenFS struct{ fstest.MapFS }

func (b brokenFS) ReadFile(name string) ([]byte, error) {
	if len(name) > 3 && name[len(name)-3:] == ".br" {
		return nil, io.ErrUnexpectedEOF
	}
	return b.MapFS.ReadFile(name)
}
