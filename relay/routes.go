package relay

import "github.com/trickle-dev/trickle/relay/internal/routes"

// Route is one route of the relay's router.
type Route struct {
	Method string // e.g. GET; a route registered without methods answers GET
	Path   string // a path template, e.g. /v1/streams/{id}
	Prefix bool   // the route serves everything under Path
}

// Routes lists the relay's routes as its router holds them, sorted by
// path then method; the docs test compares them with the README.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range routes.List(s.router) {
		out = append(out, Route(r))
	}
	return out
}
