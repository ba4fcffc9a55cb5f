package relay

import (
	"cmp"
	"io/fs"
	"net/http"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/static"
	"github.com/trickle-dev/trickle/wire"
)

// widgetHandler serves the widget at /trickle/, or says why there is none
// (503: the relay works, the widget is missing).
func (s *Server) widgetHandler() http.Handler {
	if s.cfg.widget == nil {
		return missing(http.StatusServiceUnavailable, "relay: no widget to serve: "+cmp.Or(s.cfg.widgetHint, "the relay was started without one (WithWidget)"))
	}
	if _, err := fs.Stat(s.cfg.widget, "trickle.js"); err != nil {
		return missing(http.StatusServiceUnavailable, "relay: no widget to serve: "+cmp.Or(s.cfg.widgetHint, "its folder has no trickle.js"))
	}
	return static.Files(s.cfg.widget, false, writeError)
}

// writeError answers a static file's failure (static.ErrorWriter).
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	apierr.Write(w, wire.Error{Type: wire.ErrorType(typ), Status: status, Message: msg})
}

// pagesHandler serves the example pages at /examples/ (WithPages).
func (s *Server) pagesHandler() http.Handler { return static.Files(s.cfg.pages, true, writeError) }

func missing(code int, msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apierr.Write(w, wire.Error{Type: wire.TypeUnavailable, Status: code, Message: msg})
	})
}
