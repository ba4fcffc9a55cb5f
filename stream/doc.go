// Package stream gives a model's streamed answer its meaning: one event
// model (text, thinking, tool-call deltas and results, usage, finish,
// error, end marker, and the sources, files and approval requests a
// backend sends beside the text) and one decoder per provider dialect,
// auto-detection, and the Answer that accumulates them with its status.
//
// A Pipeline takes the raw response body as it arrives, in any cut: SSE
// (decoded by package sse), NDJSON lines or a text body, chosen by the
// Content-Type or by the first byte. The dialect — OpenAI Chat Completions
// ("openai"), OpenAI Responses ("responses"), Anthropic Messages
// ("anthropic"), Gemini streamGenerateContent?alt=sse ("gemini"), Ollama
// /api/chat ("ollama"), {"delta":…} + [DONE] ("plain"), a text/plain body
// that is the answer itself ("text"), the AI SDK's UI message stream
// ("ai-sdk") or AG-UI 1.0 ("ag-ui") — is detected from the content type
// and the first event unless WithDialect fixes it; Dialects is the one list
// of them. Each dialect's Decoder turns its events into the
// unified Events, which the Answer folds in.
//
// The contracts, each tested as a property over recorded streams:
//
//   - Cut invariance: the same bytes in any chunking, one byte at a time
//     included, give the same events, answer and problems.
//   - End marker: an answer is Complete only after its dialect's end marker
//     ([DONE], message_stop, response.completed or response.incomplete,
//     done:true, a clean close after Gemini's finish reason, the AI SDK's
//     finish part, AG-UI's RUN_FINISHED, or the clean end of a text body that reached its
//     Content-Length); a stream that ends without one is Incomplete. A
//     provider error is terminal (Failed) and keeps the text received
//     before it.
//   - Tool-call arguments are exposed only once their block has ended.
//   - Bad input never panics and never loses the text around it: an event
//     that is not JSON, of an unknown type, for an unknown tool-call index,
//     or larger than the bound is skipped, counted (Answer.Skipped) and
//     explained (Answer.Problems, each a *DecodeError). A body nothing at
//     all could be read from is not a cut answer: it fails with
//     ErrUnreadable, saying its content type and how it begins.
//
// The relay's control event "trickle.status" ({"status":"stopped" |
// "failed" | "gone","message":…}) is understood in every dialect.
//
// It never touches the DOM or the network: bytes in, values out.
package stream

// The jsonx readers of the payload structs (those marked //jsonx:reader
// and every struct they reach) are generated from their json tags.
//go:generate go run ../internal/jsonx/jsonxgen -out readers_gen.go
