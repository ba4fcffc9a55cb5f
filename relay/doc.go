// Package relay is Trickle's server: it streams answers over SSE and
// WebSocket side by side from a simulated model (package relay/sim) or a real
// upstream (OpenAI-compatible, Anthropic, Ollama), with ids on every event,
// resume by Last-Event-ID, Stop that cancels upstream, heartbeats, limits and
// graceful shutdown; it also serves the widget and the example pages when
// asked to (WithWidget, WithPages). docs/embedding.md mounts it in a
// site's own mux.
//
// Each generation is an append-only log of encoded SSE events. The
// generator appends; every reader — the SSE response, a WebSocket, a resume —
// keeps its own position, sends everything new in one write with a deadline,
// and waits for news. A slow reader therefore never holds up the generator
// or the other readers, a resume replays exactly the bytes the first
// connection got, and the WebSocket carries the very same SSE text, one
// event per message. A disconnect is not Stop: the generation goes on for a
// grace period, waiting for a resume, before the upstream is cancelled.
//
// Where the logs live is a Store (package relay/store): in this process
// (MemoryStore, the default), or in Redis Streams (RedisStore), shared by a
// fleet of relays so that any instance resumes and stops any stream
// (docs/fleet.md). Inside: internal/streamlog (the log and its readers),
// internal/sink (the socket writers), internal/upstream, internal/chat,
// internal/simclock, internal/redisstore, internal/metrics.
//
// It never sends the upstream API key to a client. It parses markdown in
// one place only: with hold-back, the gate (internal/holdback) reads the
// held answer as the widget would (render's parse, no HTML and no DOM) to
// find its sentences and their rendered text.
package relay
