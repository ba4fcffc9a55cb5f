// Package routes lists a gorilla/mux router's routes, for the relay's
// Routes (the docs test compares them with the README).
package routes

import (
	"net/http"
	"sort"

	"github.com/gorilla/mux"
)

// Route is one route of a router: a method and a path template
// ("/v1/streams/{id}"); a Prefix route serves everything under Path.
type Route struct {
	Method string
	Path   string
	Prefix bool
}

// List lists r's routes (a route without methods answers GET), sorted by
// path then method.
func List(r *mux.Router) []Route {
	var out []Route
	_ = r.Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := r.GetPathTemplate()
		if err != nil {
			return nil // a subrouter's own entry with no path of its own
		}
		if r.GetHandler() == nil {
			return nil // a subrouter: its routes come next
		}
		_, perr := r.GetPathRegexp()
		prefix := perr == nil && isPrefix(r)
		methods, err := r.GetMethods()
		if err != nil || len(methods) == 0 {
			methods = []string{http.MethodGet}
		}
		for _, m := range methods {
			out = append(out, Route{Method: m, Path: tpl, Prefix: prefix})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// isPrefix reports whether a route matches a path prefix rather than a
// whole path: its regexp is not anchored at the end.
func isPrefix(r *mux.Route) bool {
	re, err := r.GetPathRegexp()
	if err != nil {
		return false
	}
	return len(re) == 0 || re[len(re)-1] != '$'
}
