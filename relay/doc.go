// Package relay is Trickle's server: it streams answers over SSE and
// WebSocket side by side from a simulated model or a real upstream, with
// ids on every event, resume by Last-Event-ID, Stop that cancels upstream,
// heartbeats, limits and graceful shutdown.
//
// It never parses markdown.
package relay
