package relay

import "github.com/trickle-dev/trickle/relay/internal/routes"

// Route is one route of the relay's router: a method and a path template
// ("/v1/streams/{id}"); a Prefix route serves everything under Path.
type Route = routes.Route

// Routes lists the relay's routes as its router holds them (a route
// without methods answers GET), sorted by path then method; the docs test
// compares them with the README.
func (s *Server) Routes() []Route { return routes.List(s.router) }
