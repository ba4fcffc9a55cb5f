package routes

import (
	"net/http"
	"testing"

	"github.com/gorilla/mux"
	"github.com/stretchr/testify/require"
)

func TestListNamesEveryRouteWithItsMethodsSorted(t *testing.T) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	r := mux.NewRouter()
	r.Handle("/v1/streams/{id}", ok).Methods(http.MethodGet, http.MethodDelete)
	r.Handle("/v1/chat/completions", ok).Methods(http.MethodPost)
	r.Handle("/healthz", ok) // no method: GET
	r.PathPrefix("/assets/").Handler(ok)
	api := r.PathPrefix("/v2").Subrouter()
	api.Handle("/info", ok).Methods(http.MethodGet)
	r.NewRoute().Handler(ok) // no path: not listed

	require.Equal(t, []Route{
		{Method: "GET", Path: "/assets/", Prefix: true},
		{Method: "GET", Path: "/healthz"},
		{Method: "POST", Path: "/v1/chat/completions"},
		{Method: "DELETE", Path: "/v1/streams/{id}"},
		{Method: "GET", Path: "/v1/streams/{id}"},
		{Method: "GET", Path: "/v2/info"},
	}, List(r))
}

func TestAnEmptyRouterListsNothing(t *testing.T) {
	require.Empty(t, List(mux.NewRouter()))
}
