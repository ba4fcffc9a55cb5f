package protocol

//go:generate go run ./gencontract -root ../..

// The contract table: what the page and Go, the two elements and their
// typings must agree on, written once. `go generate ./wasm/protocol`
// (cmd gencontract) writes the other sides from it:
//
//   - wasm/web/contract.js: the constants the page's modules import
//     (message types, command kinds, VERSION, every attribute's name, the
//     attribute lists of each element and the list a chat hands to its
//     answers, the string keys and their English);
//   - the generated regions of wasm/web/types/trickle-answer.d.ts (each
//     element's attributes and events, TrickleStrings), react.d.ts and
//     vue.d.ts (both elements), and custom-elements.json's attributes and
//     events;
//   - english.go here: a Go constant per string key and per English;
//   - the attribute, event and string tables of the reference pages
//     docs/reference/trickle-answer.md and trickle-chat.md.
//
// TestGeneratedFilesAreFresh fails when one of them is stale.
//
// Adding an attribute is one row in Attributes, then go generate:
//
//	{Name: "idle-timeout", Key: KeyIdleTimeout, Type: "string", On: OnAnswer | OnChat,
//		Doc: "Seconds without a byte before the answer ends incomplete (default 60)."},
//
// Key is the command key the answer sends its value under (declare it
// with the other Key constants below and read it in widget.ParseCommand),
// or "" for an attribute only the page reads. The answer's request()
// sends every row with a Key; a <trickle-chat> hands every row it takes
// (On has OnChat) to each answer. The reference pages' tables follow;
// say more of it there by hand if one line is not enough.

// Element is a set of the page's elements.
type Element uint8

// The elements.
const (
	OnAnswer Element = 1 << iota // <trickle-answer>
	OnChat                       // <trickle-chat>
)

// Tag is the element's tag name.
func (e Element) Tag() string {
	switch e {
	case OnAnswer:
		return "trickle-answer"
	case OnChat:
		return "trickle-chat"
	}
	return ""
}

// The command keys the page sends an element's attributes under (see
// widget.ParseCommand).
const (
	KeyURL         = "url"       // endpoint, resolved against document.baseURI
	KeyWS          = "ws"        // ws-endpoint
	KeyTransport   = "transport" // transport
	KeyDialect     = "dialect"   // dialect
	KeyAnnounce    = "announce"  // announce
	KeyModel       = "model"     // model
	KeyImages      = "images"    // image-origins
	KeyShowMetrics = "metrics"   // show-metrics
	KeyIdleTimeout = "idle"      // idle-timeout
	KeyHighlight   = "highlight" // highlight
)

// Attribute is one attribute of the elements.
type Attribute struct {
	// Name is the HTML attribute.
	Name string
	// Key is the command key its value crosses to Go under ("" when only
	// the page reads it).
	Key string
	// Type is its value's TypeScript type: "string", "boolean" (a present
	// or absent attribute: set it with "" or true) or a union of string
	// literals.
	Type string
	// Default is the value an absent attribute means to the page ("" for
	// none); only a string attribute has one.
	Default string
	// On is the elements that take it. A chat hands each one it takes
	// that is also an answer's to its answers; one only a chat takes (a
	// part of its composer) stays with the chat.
	On Element
	// Doc is its one-line documentation, in the typings and the manifest.
	Doc string
}

// Bool says whether the attribute is a boolean attribute (its presence is
// its value).
func (a Attribute) Bool() bool { return a.Type == "boolean" }

// Attributes is the table of the elements' attributes, in the order the
// typings list them.
var Attributes = []Attribute{
	{Name: "endpoint", Key: KeyURL, Type: "string", Default: "/v1/chat/completions", On: OnAnswer | OnChat,
		Doc: "The chat completions URL (default /v1/chat/completions)."},
	{Name: "transport", Key: KeyTransport, Type: `"sse" | "websocket"`, On: OnAnswer | OnChat,
		Doc: "sse (default) or websocket."},
	{Name: "ws-endpoint", Key: KeyWS, Type: "string", On: OnAnswer | OnChat,
		Doc: "Another WebSocket URL."},
	{Name: "dialect", Key: KeyDialect, Type: `"auto" | "openai" | "responses" | "anthropic" | "gemini" | "ollama" | "plain" | "text" | "ai-sdk" | "ag-ui"`, On: OnAnswer | OnChat,
		Doc: "auto (default), openai, responses, anthropic, gemini, ollama, plain, text, ai-sdk or ag-ui."},
	{Name: "announce", Key: KeyAnnounce, Type: `"sentences" | "complete" | "off"`, On: OnAnswer | OnChat,
		Doc: "What a screen reader hears: sentences (default), complete or off."},
	{Name: "speak", Type: "boolean", On: OnAnswer | OnChat,
		Doc: "Read the answer aloud with speechSynthesis, one utterance per confirmed sentence, while it streams."},
	{Name: "model", Key: KeyModel, Type: "string", On: OnAnswer | OnChat,
		Doc: "The model sent with ask(prompt) (and with each turn of a chat); without it the request names none."},
	{Name: "image-origins", Key: KeyImages, Type: "string", On: OnAnswer | OnChat,
		Doc: "Space-separated origins images may load from."},
	{Name: "show-metrics", Key: KeyShowMetrics, Type: "boolean", On: OnAnswer | OnChat,
		Doc: "Show the metrics in the element at the end."},
	{Name: "highlight", Key: KeyHighlight, Type: "boolean", On: OnAnswer | OnChat,
		Doc: "Syntax highlighting of settled code blocks, by the highlighting build (import trickle-answer/highlight)."},
	{Name: "idle-timeout", Key: KeyIdleTimeout, Type: "string", Default: "60", On: OnAnswer | OnChat,
		Doc: "Seconds without a byte after which the answer ends incomplete, its text kept (default 60; 0: never)."},
	{Name: "worker", Type: `"off"`, On: OnAnswer | OnChat,
		Doc: "off: run the widget's Go side on the page's main thread."},
	{Name: "protocol", Type: `"openai" | "ai-sdk"`, Default: "openai", On: OnChat,
		Doc: "What the chat sends: openai (default: {messages, model, tools, tool_choice}) or ai-sdk (what the AI SDK's DefaultChatTransport sends a useChat route)."},
}

// Inherited are the global HTML attributes a chat hands to its answers
// besides its own (an answer's language and direction are its chat's).
var Inherited = []string{"lang", "dir"}

// Event is one event an element dispatches (bubbling, composed).
type Event struct {
	Name string
	// Detail is the TypeScript type of its detail (declared by hand in
	// trickle-answer.d.ts).
	Detail string
	On     Element
	Doc    string
}

// Events is the table of the elements' events.
var Events = []Event{
	{Name: "trickle-start", Detail: "TrickleStartDetail", On: OnAnswer,
		Doc: "The answer started streaming."},
	{Name: "trickle-first-token", Detail: "TrickleFirstTokenDetail", On: OnAnswer,
		Doc: "The answer's first token arrived (detail: ttft_ms, ttfat_ms)."},
	{Name: "trickle-end", Detail: "TrickleEndDetail", On: OnAnswer,
		Doc: "The answer ended (detail: status, metrics, message)."},
	{Name: "trickle-tool-call", Detail: "TrickleToolCallDetail", On: OnAnswer,
		Doc: "A tool call's arguments are complete (detail: id, name, arguments, raw)."},
	{Name: "trickle-usage", Detail: "TrickleUsageDetail", On: OnAnswer,
		Doc: "A stopped answer's cost arrived after its end, as the relay counted it (detail: usage, message)."},
	{Name: "trickle-error", Detail: "TrickleErrorDetail", On: OnAnswer,
		Doc: "The answer failed (detail: status, message)."},
	{Name: "trickle-chat-change", Detail: "TrickleChatChangeDetail", On: OnChat,
		Doc: "A turn ended, or the history was set: detail.messages is the history to save."},
}

// Message is one type of message Go (or the worker script) sends the page.
type Message struct {
	Type string
	Doc  string
}

// Messages is the table of the message types.
var Messages = []Message{
	{TypeReady, "Go is ready for commands (Ready)"},
	{TypeWarm, "HTML for the page to parse once, off-screen (Warm)"},
	{TypeStats, "the answer to a stats command (StatsMessage)"},
	{TypeFrame, "a frame of updates, applied in an animation frame"},
	{TypeSay, "announcements alone, written at once"},
	{TypeAlive, "the worker script runs (before Go does)"},
	{TypeFail, "the worker could not start Go: message says why"},
}

// KindDoc is a command kind and its documentation.
type KindDoc struct {
	Kind Kind
	Doc  string
}

// Kinds is the table of the command kinds.
var Kinds = []KindDoc{
	{Attach, "an element is on the page"},
	{Ask, "ask(): a prompt or a request body"},
	{Stream, "stream(): the page's own fetch"},
	{Retry, "the retry button, retry()"},
	{Stop, "the stop button, stop()"},
	{Detach, "the element left the page"},
	{Stats, "the lifecycle tests' counters"},
	{Show, "el.message, el.markdown: a stored answer"},
}

// Side says who writes a string into the page.
type Side uint8

// The sides.
const (
	ByPage Side = iota // the page's JavaScript (a label, a button)
	ByGo               // the Go side (a status, a notice, a reason)
)

// String is one of the words the widget shows or speaks: its key (what a
// page replaces it by, TrickleAnswer.strings), its English, who writes it,
// and where it is used.
type String struct {
	Key     string
	English string
	Side    Side
	Doc     string
}

// Strings is the table of the widget's words, in the order the typings
// and docs/package.md list them.
var Strings = []String{
	{"copy", "Copy", ByPage, "a code block's Copy button"},
	{"copyCode", "Copy code", ByPage, "its accessible name"},
	{"copyTable", "Copy table", ByPage, "a table's copy button"},
	{"copied", "Copied", ByPage, "said when the clipboard took it"},
	{"copyFailed", "Copy failed: the browser refused the clipboard.", ByPage, "said when it did not"},
	{"thinking", "Thinking", ByPage, "the thinking panel's summary"},
	{"jumpToLatest", "Jump to latest", ByPage, "the jump button"},
	{"retry", "Retry", ByPage, "the notice's retry button"},
	{"unavailable", "The answer cannot be shown on this page.", ByPage, "the widget could not start on this page (a CSP without 'wasm-unsafe-eval', the .wasm not found, a worker refused)"},
	{"chatInput", "Message", ByPage, "the chat composer's label"},
	{"chatSend", "Send", ByPage, "the chat's Send button"},
	{"chatStop", "Stop", ByPage, "the chat's Stop button"},
	{"chatYou", "You said:", ByPage, "each of the reader's turns, said to screen readers (hidden on screen)"},
	{"chatAssistant", "The assistant said:", ByPage, "each answer's turn, said to screen readers (hidden on screen)"},
	{"chatRegenerate", "Regenerate", ByPage, "the button under the last answer"},
	{"chatEdit", "Edit", ByPage, "the button on the last question"},
	{"chatCopyAnswer", "Copy answer", ByPage, "each answer's button that copies it as markdown"},
	{"chatThread", "Conversation", ByPage, "the thread's name, said when focus enters it"},
	{"chatThreadKeys", "Page Up and Page Down, or the up and down arrows, move between messages, Home and End to the first and last, Escape back to the message box.", ByPage, "the thread's description, said when focus enters it"},
	{"chatTurnYou", "You said, {n} of {total}", ByPage, "a turn of the reader's, said when the thread is walked (its position in the thread)"},
	{"chatTurnAssistant", "The assistant said, {n} of {total}", ByPage, "an answer's turn, said when the thread is walked"},
	{"chatCutOff", "[This answer was cut off before it finished.]", ByPage, "sent to the model after a cut-off answer's text, never shown"},
	{"chatApproveAsk", "Run {name}?", ByPage, "a tool call that asks first: the question above its arguments"},
	{"chatApprove", "Approve", ByPage, "its Approve button"},
	{"chatDeny", "Deny", ByPage, "its Deny button"},
	{"chatApproved", "Approved: {name} ran.", ByPage, "shown (and said) once the reader approved"},
	{"chatDenied", "Denied: {name} did not run.", ByPage, "shown (and said) once the reader denied"},
	{"chatRefusal", "The user denied this tool call; it did not run.", ByPage, "sent to the model as a denied tool's result, never shown"},
	{"responding", "Assistant is responding.", ByGo, "status while the answer streams (shown, and said at its start)"},
	{"complete", "Answer complete.", ByGo, "status of a complete answer"},
	{"stopped", "Answer stopped.", ByGo, "status of a stopped answer"},
	{"incomplete", "Answer incomplete.", ByGo, "status of an answer that ended early; the reader hears it, then why"},
	{"failed", "Answer failed.", ByGo, "status of a failed answer; the reader hears it, then why"},
	{"stalled", "Waiting for the model…", ByGo, "the stall notice, said once (and shown: it sets `--trickle-stall-text`)"},
	{"stoppedNotice", "Stopped.", ByGo, "the notice of a stopped answer"},
	{"calling", "Calling {name}", ByGo, "a tool call while its arguments stream (`…` follows)"},
	{"called", "Called {name}", ByGo, "a tool call whose arguments are complete"},
	{"aTool", "a tool", ByGo, "a call's name before it has one"},
	{"toolFailed", "Failed: {error}", ByGo, "what a tool the backend ran reported as its error"},
	{"sources", "Sources", ByGo, "the heading of an answer's numbered list of the sources it cites"},
	{"sourcesSaid", "Sources listed after the answer: {count}.", ByGo, "said once, after the end status, when the answer has sources"},
	{"refused", "The server refused the request ({status}).", ByGo, "HTTP 401 or 403"},
	{"notFound", "The server has no answer at this address ({status}).", ByGo, "HTTP 404 or 410"},
	{"rateLimited", "Too many requests ({status}): wait a moment, then retry.", ByGo, "HTTP 429"},
	{"serverError", "The server failed to answer ({status}).", ByGo, "HTTP 5xx"},
	{"rejected", "The server did not accept the request ({status}).", ByGo, "any other status that is no success"},
	{"network", "Could not reach the server.", ByGo, "no connection to the server (fetch failed, a WebSocket never opened)"},
	{"dropped", "The connection dropped and could not be resumed.", ByGo, "the connection broke after the answer began, and resuming did not bring it back"},
	{"cutOff", "The answer ended before the model finished.", ByGo, "the body ended without the answer's end marker"},
	{"empty", "The server sent an empty answer.", ByGo, "the body ended with nothing in it"},
	{"unreadable", "The server's answer is in a form this page cannot read.", ByGo, "bytes came that no dialect reads (an HTML page, JSON of no model API)"},
	{"upstream", "The model's service reported an error.", ByGo, "the model, or the relay in front of it, reported an error in the stream"},
	{"relayFailed", "The relay serving this answer failed.", ByGo, "the relay's own failure, with no error of the model's before it (a relay of a fleet that died)"},
	{"tooLarge", "Part of the answer was too large to read.", ByGo, "an event over the size bound was dropped, and the answer ended without its end"},
	{"expired", "The answer expired on the server and cannot be resumed.", ByGo, "the relay no longer has the stream to resume"},
	{"withheld", "This answer was withheld.", ByGo, "the relay's hold-back checker blocked a sentence ([security.md](security.md#hold-back))"},
	{"idle", "The server went silent, so the answer stops here.", ByGo, "no byte came for the element's idle-timeout; the text so far is kept"},
	{"unknown", "Something went wrong.", ByGo, "anything else (a fault in the widget)"},
	{"metricTTFB", "Time to first byte", ByGo, "a `show-metrics` row's name"},
	{"metricTTFT", "Time to first token", ByGo, "a `show-metrics` row's name"},
	{"metricTTFAT", "Time to first answer token", ByGo, "a `show-metrics` row's name"},
	{"metricGaps", "Gap p50 / p95", ByGo, "a `show-metrics` row's name"},
	{"metricTokensPerSecond", "Tokens per second", ByGo, "a `show-metrics` row's name"},
	{"metricBytes", "Bytes", ByGo, "a `show-metrics` row's name"},
	{"metricBuffering", "Buffering", ByGo, "a `show-metrics` row's name"},
	{"metricLongestFrame", "Longest frame", ByGo, "a `show-metrics` row's name"},
}
