// Types of the trickle-answer package: the <trickle-answer> and
// <trickle-chat> elements, their events and the answer's metrics.
// Hand-written beside the JavaScript it describes (wasm/web), except the
// parts between <generated> markers: the elements' attributes and events
// and the strings, which go generate ./wasm/protocol writes from the
// contract table (wasm/protocol/contract.go). cmd/trickle's docs tests
// check it names every metrics field, method and property the widget has,
// and no other.

/** An answer's status: `idle` before the first ask, `streaming` while it
 *  streams, then how it ended. */
export type TrickleStatus = "idle" | "streaming" | "complete" | "stopped" | "incomplete" | "failed";

/** How an ask(), stream() or retry() call ended (its Promise's value). */
export type TrickleFinalStatus = Exclude<TrickleStatus, "idle" | "streaming">;

/** What the widget measured about an answer: times in ms from the ask()
 *  call, gaps between text deltas as the widget read them. */
export interface TrickleAnswerMetrics {
  /** First byte of the response body. */
  ttfb_ms: number;
  /** First visible token of any kind, thinking included. */
  ttft_ms: number;
  /** First token of the answer itself, after any thinking (equal to
   *  ttft_ms when there is none). */
  ttfat_ms: number;
  gap_p50_ms: number;
  gap_p95_ms: number;
  /** Longest gap between two text deltas (a stall, a reconnect). */
  gap_max_ms: number;
  /** Text deltas received. */
  tokens: number;
  tokens_per_s: number;
  /** Response body or WebSocket payload bytes, all connections. */
  bytes: number;
  duration_ms: number;
  /** "buffered": first and last byte arrived together (something between
   *  held the stream back). */
  buffering: "streamed" | "buffered" | "unknown";
  /** Resumed connections. */
  reconnects: number;
  /** Frames applied to the page. */
  frames: number;
  /** Go's longest frame, on its thread. */
  frame_max_ms: number;
  frame_total_ms: number;
  /** Where the widget's Go side ran. */
  thread: "worker" | "main";
  /** Reading aloud: "on" (the speak attribute), "off", or "unavailable"
   *  (no speechSynthesis: speak does nothing). */
  speech: "on" | "off" | "unavailable";
}

// <generated attributes>: go generate ./wasm/protocol writes this part from its contract table; do not edit.
/** <trickle-answer>'s attributes, as a page sets them in HTML or JSX. */
export interface TrickleAnswerAttributes {
  /** The chat completions URL (default /v1/chat/completions). */
  endpoint?: string;
  /** sse (default) or websocket. */
  transport?: "sse" | "websocket";
  /** Another WebSocket URL. */
  "ws-endpoint"?: string;
  /** auto (default), openai, responses, anthropic, gemini, ollama, plain, text, ai-sdk or ag-ui. */
  dialect?: "auto" | "openai" | "responses" | "anthropic" | "gemini" | "ollama" | "plain" | "text" | "ai-sdk" | "ag-ui";
  /** What a screen reader hears: sentences (default), complete or off. */
  announce?: "sentences" | "complete" | "off";
  /** Read the answer aloud with speechSynthesis, one utterance per confirmed sentence, while it streams. */
  speak?: boolean | "";
  /** The model sent with ask(prompt) (and with each turn of a chat); without it the request names none. */
  model?: string;
  /** Space-separated origins images may load from. */
  "image-origins"?: string;
  /** Show the metrics in the element at the end. */
  "show-metrics"?: boolean | "";
  /** Syntax highlighting of settled code blocks, by the highlighting build (import trickle-answer/highlight). */
  highlight?: boolean | "";
  /** Seconds without a byte after which the answer ends incomplete, its text kept (default 60; 0: never). */
  "idle-timeout"?: string;
  /** off: run the widget's Go side on the page's main thread. */
  worker?: "off";
}
/** <trickle-chat>'s attributes, as a page sets them in HTML or JSX: each
 *  that is also an answer's is handed to every answer of the chat. */
export interface TrickleChatAttributes {
  /** The chat completions URL (default /v1/chat/completions). */
  endpoint?: string;
  /** sse (default) or websocket. */
  transport?: "sse" | "websocket";
  /** Another WebSocket URL. */
  "ws-endpoint"?: string;
  /** auto (default), openai, responses, anthropic, gemini, ollama, plain, text, ai-sdk or ag-ui. */
  dialect?: "auto" | "openai" | "responses" | "anthropic" | "gemini" | "ollama" | "plain" | "text" | "ai-sdk" | "ag-ui";
  /** What a screen reader hears: sentences (default), complete or off. */
  announce?: "sentences" | "complete" | "off";
  /** Read the answer aloud with speechSynthesis, one utterance per confirmed sentence, while it streams. */
  speak?: boolean | "";
  /** The model sent with ask(prompt) (and with each turn of a chat); without it the request names none. */
  model?: string;
  /** Space-separated origins images may load from. */
  "image-origins"?: string;
  /** Show the metrics in the element at the end. */
  "show-metrics"?: boolean | "";
  /** Syntax highlighting of settled code blocks, by the highlighting build (import trickle-answer/highlight). */
  highlight?: boolean | "";
  /** Seconds without a byte after which the answer ends incomplete, its text kept (default 60; 0: never). */
  "idle-timeout"?: string;
  /** off: run the widget's Go side on the page's main thread. */
  worker?: "off";
  /** What the chat sends: openai (default: {messages, model, tools, tool_choice}) or ai-sdk (what the AI SDK's DefaultChatTransport sends a useChat route). */
  protocol?: "openai" | "ai-sdk";
}
// </generated attributes>

/** trickle-start's detail. */
export interface TrickleStartDetail {
  status: "streaming";
}

/** trickle-first-token's detail, sent with the answer's first token. */
export interface TrickleFirstTokenDetail {
  ttft_ms: number;
  ttfat_ms: number;
}

/** A tool call the model made: its arguments parsed once complete (null
 *  before, or when they are not JSON), and their raw text. */
export interface TrickleToolCall {
  id: string;
  name: string;
  arguments: unknown;
  raw: string;
  complete: boolean;
}

/** The answer as an assistant message, ready for the next turn's history. */
export interface TrickleMessage {
  role: "assistant";
  /** The answer's markdown. */
  content: string;
  status: TrickleFinalStatus;
  /** Stopped, cut off or failed with text shown: not a finished answer. */
  incomplete: boolean;
  /** The provider's finish reason, verbatim (null when none came). */
  finish_reason: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    reasoning_tokens: number;
    total_tokens: number;
    /** Counted by the relay, not the provider's (a stopped answer). */
    estimated?: true;
  } | null;
  tool_calls: TrickleToolCall[];
  /** The model's reasoning, when it sent it. */
  thinking: string;
  /** What the backend waits on the reader for (the AI SDK's
   *  tool-approval-request, an AG-UI interrupt), only when it asked;
   *  <trickle-chat> sets approved once the reader answered. */
  approvals?: { id: string; tool_call_id: string | null; reason: string | null; message: string | null; approved?: boolean }[];
  /** The sources the answer drew on, numbered from 1 in this order (only
   *  when it has some). */
  sources?: TrickleSource[];
  /** Where the answer cites its sources (only when it does). */
  citations?: TrickleCitation[];
}

/** A source an answer drew on: a web page or a document, with what the
 *  backend gave of it. */
export interface TrickleSource {
  id?: string;
  url?: string;
  title?: string;
  media_type?: string;
  filename?: string;
}

/** A citation: the source's number (1 for the first of `sources`), the
 *  byte offset in `content` where the cited passage ends, and the passage
 *  as the provider quoted it. */
export interface TrickleCitation {
  source: number;
  end: number;
  quote?: string;
}

/** A message to show again (el.message = …): a TrickleMessage, or at least
 *  its content. Without a status it is a complete answer. */
export type TrickleStoredMessage = Partial<TrickleMessage> & { content: string };

/** trickle-end's detail: how the answer ended, what was measured, and the
 *  answer as a message. */
export interface TrickleEndDetail {
  status: TrickleFinalStatus;
  metrics: TrickleAnswerMetrics;
  message: TrickleMessage;
}

/** trickle-usage's detail: what a stopped answer cost, from the relay's
 *  answer to the Stop (after trickle-end), and the message with it. */
export interface TrickleUsageDetail {
  usage: NonNullable<TrickleMessage["usage"]>;
  message: TrickleMessage;
}

/** trickle-tool-call's detail: a tool call whose arguments are complete. */
export interface TrickleToolCallDetail extends TrickleToolCall {
  complete: true;
}

/** Why an answer failed (trickle-error's detail.reason): the key of the
 *  sentence the reader was shown; "call" for an ask(), stream() or retry()
 *  that could not start an answer (the page's mistake, or a widget that
 *  could not load), which no reader is shown. */
export type TrickleErrorReason =
  | "refused"
  | "notFound"
  | "rateLimited"
  | "serverError"
  | "rejected"
  | "network"
  | "dropped"
  | "unreadable"
  | "upstream"
  | "expired"
  | "withheld"
  | "unknown"
  | "call";

/** trickle-error's detail: the answer failed, and why. */
export interface TrickleErrorDetail {
  status: "failed";
  /** What the reader was told: one sentence, in the page's strings. */
  message: string;
  reason: TrickleErrorReason;
  /** The technical chain, for the developer (also on the console). */
  detail: string;
  /** The response's HTTP status, when one explains the failure. */
  httpStatus?: number;
}

// <generated strings>: go generate ./wasm/protocol writes this part from its contract table; do not edit.
/** Every word the widget shows or speaks, by key (English built in: see
 *  docs/package.md). {status} is an HTTP status code, {name} a tool's
 *  name. Set some for the page (TrickleAnswer.strings) or one element
 *  (el.strings). */
export interface TrickleStrings {
  /** Copy */
  copy: string;
  /** Copy code */
  copyCode: string;
  /** Copy table */
  copyTable: string;
  /** Copied */
  copied: string;
  /** Copy failed: the browser refused the clipboard. */
  copyFailed: string;
  /** Thinking */
  thinking: string;
  /** Jump to latest */
  jumpToLatest: string;
  /** Retry */
  retry: string;
  /** The answer cannot be shown on this page. */
  unavailable: string;
  /** Message */
  chatInput: string;
  /** Send */
  chatSend: string;
  /** Stop */
  chatStop: string;
  /** You said: */
  chatYou: string;
  /** The assistant said: */
  chatAssistant: string;
  /** Regenerate */
  chatRegenerate: string;
  /** Edit */
  chatEdit: string;
  /** Copy answer */
  chatCopyAnswer: string;
  /** Conversation */
  chatThread: string;
  /** Page Up and Page Down, or the up and down arrows, move between messages, Home and End to the first and last, Escape back to the message box. */
  chatThreadKeys: string;
  /** You said, {n} of {total} */
  chatTurnYou: string;
  /** The assistant said, {n} of {total} */
  chatTurnAssistant: string;
  /** [This answer was cut off before it finished.] */
  chatCutOff: string;
  /** Run {name}? */
  chatApproveAsk: string;
  /** Approve */
  chatApprove: string;
  /** Deny */
  chatDeny: string;
  /** Approved: {name} ran. */
  chatApproved: string;
  /** Denied: {name} did not run. */
  chatDenied: string;
  /** The user denied this tool call; it did not run. */
  chatRefusal: string;
  /** Assistant is responding. */
  responding: string;
  /** Answer complete. */
  complete: string;
  /** Answer stopped. */
  stopped: string;
  /** Answer incomplete. */
  incomplete: string;
  /** Answer failed. */
  failed: string;
  /** Waiting for the model… */
  stalled: string;
  /** Stopped. */
  stoppedNotice: string;
  /** Calling {name} */
  calling: string;
  /** Called {name} */
  called: string;
  /** a tool */
  aTool: string;
  /** Failed: {error} */
  toolFailed: string;
  /** Sources */
  sources: string;
  /** Sources listed after the answer: {count}. */
  sourcesSaid: string;
  /** The server refused the request ({status}). */
  refused: string;
  /** The server has no answer at this address ({status}). */
  notFound: string;
  /** Too many requests ({status}): wait a moment, then retry. */
  rateLimited: string;
  /** The server failed to answer ({status}). */
  serverError: string;
  /** The server did not accept the request ({status}). */
  rejected: string;
  /** Could not reach the server. */
  network: string;
  /** The connection dropped and could not be resumed. */
  dropped: string;
  /** The answer ended before the model finished. */
  cutOff: string;
  /** The server sent an empty answer. */
  empty: string;
  /** The server's answer is in a form this page cannot read. */
  unreadable: string;
  /** The model's service reported an error. */
  upstream: string;
  /** The relay serving this answer failed. */
  relayFailed: string;
  /** Part of the answer was too large to read. */
  tooLarge: string;
  /** The answer expired on the server and cannot be resumed. */
  expired: string;
  /** This answer was withheld. */
  withheld: string;
  /** The server went silent, so the answer stops here. */
  idle: string;
  /** Something went wrong. */
  unknown: string;
  /** Time to first byte */
  metricTTFB: string;
  /** Time to first token */
  metricTTFT: string;
  /** Time to first answer token */
  metricTTFAT: string;
  /** Gap p50 / p95 */
  metricGaps: string;
  /** Tokens per second */
  metricTokensPerSecond: string;
  /** Bytes */
  metricBytes: string;
  /** Buffering */
  metricBuffering: string;
  /** Longest frame */
  metricLongestFrame: string;
}
// </generated strings>

// <generated events>: go generate ./wasm/protocol writes this part from its contract table; do not edit.
/** <trickle-answer>'s events (bubbling, composed), by name. */
export interface TrickleAnswerEventMap {
  /** The answer started streaming. */
  "trickle-start": CustomEvent<TrickleStartDetail>;
  /** The answer's first token arrived (detail: ttft_ms, ttfat_ms). */
  "trickle-first-token": CustomEvent<TrickleFirstTokenDetail>;
  /** The answer ended (detail: status, metrics, message). */
  "trickle-end": CustomEvent<TrickleEndDetail>;
  /** A tool call's arguments are complete (detail: id, name, arguments, raw). */
  "trickle-tool-call": CustomEvent<TrickleToolCallDetail>;
  /** A stopped answer's cost arrived after its end, as the relay counted it (detail: usage, message). */
  "trickle-usage": CustomEvent<TrickleUsageDetail>;
  /** The answer failed (detail: status, message). */
  "trickle-error": CustomEvent<TrickleErrorDetail>;
}
/** <trickle-chat>'s own events (bubbling, composed), by name; its answers'
 *  bubble through it too. */
export interface TrickleChatEventMap {
  /** A turn ended, or the history was set: detail.messages is the history to save. */
  "trickle-chat-change": CustomEvent<TrickleChatChangeDetail>;
}
// </generated events>

/** A request body for ask(): the page's own fields (messages, temperature,
 *  …), sent as they are with `stream: true` added and nothing else (not
 *  the model attribute). */
export type TrickleRequestBody = Record<string, unknown>;

/** The page's syntax highlighter: returns HTML of which only
 *  <span class> is kept. */
export type TrickleHighlighter = (code: string, lang: string) => string;

/** The page's TeX converter: returns MathML (a string or a Node) of which
 *  only MathML Core elements and attributes are kept. */
/** The page's diagram renderer: returns SVG (a string, a Node or a
 *  promise of one) of which only SVG drawing elements are kept. */
export type TrickleDiagramRenderer = (lang: string, source: string) => string | Node | Promise<string | Node>;

export type TrickleMathConverter = (tex: string, options: { display: boolean }) => string | Node | Promise<string | Node>;

/** How <trickle-answer speak> reads aloud: a voice (or its name), rate,
 *  pitch and volume as SpeechSynthesisUtterance takes them, and the
 *  language (the element's lang by default). */
export interface TrickleSpeechOptions {
  voice?: SpeechSynthesisVoice | string;
  rate?: number;
  pitch?: number;
  volume?: number;
  lang?: string;
}

/** <trickle-answer>: streams a model's answer, renders its markdown as it
 *  is written and announces it sentence by sentence. */
export declare class TrickleAnswer extends HTMLElement {
  /** Starts an answer to a prompt or a request body; resolves with the
   *  final status. */
  ask(promptOrBody: string | TrickleRequestBody): Promise<TrickleFinalStatus>;
  /** Streams the response of fetch(url, init) (SSE or NDJSON). */
  stream(url: string | URL, init?: RequestInit): Promise<TrickleFinalStatus>;
  /** Stops the answer: aborts the request and asks the relay to cancel. */
  stop(): void;
  /** Asks again with the last request. */
  retry(): Promise<TrickleFinalStatus>;
  /** Reads the answer aloud (sets speak): what was said so far, then
   *  each sentence as it is confirmed. */
  speak(): void;
  /** Stops reading aloud (removes speak) and drops what was queued. */
  stopSpeaking(): void;
  /** How the answer is read aloud. */
  speech: TrickleSpeechOptions;
  readonly status: TrickleStatus;
  /** The answer's markdown so far, in step with what is on screen. */
  readonly text: string;
  /** The relay's id of the stream ("" when the endpoint is no relay). */
  readonly streamId: string;
  /** What the widget measured (null before the first ask, and on a first
   *  visit while the widget loads: trickle-first-token's detail has the
   *  times then). */
  readonly metrics: TrickleAnswerMetrics | null;
  /** The ended answer as an assistant message (null until an answer
   *  ends): the history's next entry. Setting it shows a stored answer at
   *  once, with its stored status: no request, no announcement, no event. */
  get message(): TrickleMessage | null;
  set message(m: TrickleStoredMessage);
  /** The answer's markdown; setting it shows it as a complete answer. */
  get markdown(): string;
  set markdown(s: string);
  /** The page's own highlighter, called once per settled code block. */
  highlighter: TrickleHighlighter | null;
  /** The page's TeX to MathML converter, called once per settled formula. */
  math: TrickleMathConverter | null;
  /** The page's diagram renderer, called once per settled block of diagramLanguages. */
  diagram: TrickleDiagramRenderer | null;
  /** The code block languages drawn by diagram (["mermaid"] by default). */
  diagramLanguages: string[];
  /** Extra request headers sent with every ask (e.g. Authorization). */
  headers: Record<string, string>;
  /** Seconds without a byte before the answer ends as incomplete (the
   *  idle-timeout attribute: 60 by default, 0 turns the bound off). */
  idleTimeout: number;
  /** This element's words, over TrickleAnswer.strings; a key that is not
   *  one, or a value that is no string, throws a TypeError. */
  strings: Partial<TrickleStrings>;
  /** The page's words for every element (shown words change at once,
   *  spoken and status words with the next ask). */
  static strings: Partial<TrickleStrings>;

  addEventListener<K extends keyof TrickleAnswerEventMap>(
    type: K,
    listener: (this: TrickleAnswer, ev: TrickleAnswerEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener<K extends keyof HTMLElementEventMap>(
    type: K,
    listener: (this: TrickleAnswer, ev: HTMLElementEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof TrickleAnswerEventMap>(
    type: K,
    listener: (this: TrickleAnswer, ev: TrickleAnswerEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener<K extends keyof HTMLElementEventMap>(
    type: K,
    listener: (this: TrickleAnswer, ev: HTMLElementEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** A message of a <trickle-chat>'s history, OpenAI-style: the reader's
 *  (user), an answer (assistant: a TrickleMessage), a tool's result (tool),
 *  or the page's own system or developer message. */
export type TrickleChatMessage =
  | { role: "user" | "system" | "developer"; content: string; id?: string }
  | (TrickleMessage & { id?: string })
  | { role: "tool"; tool_call_id: string; name?: string; content: string; error?: string };

/** A client-side tool's function: called with the call's parsed
 *  arguments when the model calls it; its result (a string, or any JSON
 *  value) goes back to the model. A tool that throws is reported to the
 *  model and the reader. */
export type TrickleChatToolRun = (args: Record<string, unknown>, call: { id: string; name: string }) => unknown | Promise<unknown>;

/** A client-side tool: declared to the model with its description and
 *  its parameters' JSON Schema (sent as OpenAI's tools), or a plain
 *  function (declared by its name alone, taking any object). With
 *  needsApproval (true, or a function of the call's arguments), a call
 *  runs only once the reader approves it; denied, the model gets the
 *  refusal as its result. */
export type TrickleChatTool =
  | TrickleChatToolRun
  | {
      description?: string;
      parameters?: Record<string, unknown>;
      run: TrickleChatToolRun;
      needsApproval?: boolean | ((args: Record<string, unknown>, call: { id: string; name: string }) => boolean | Promise<boolean>);
    };

/** OpenAI's tool_choice: the model decides (auto), calls none, calls
 *  some (required), or calls the tool named. */
export type TrickleToolChoice = "auto" | "none" | "required" | (string & {}) | { type: "function"; function: { name: string } };

/** trickle-chat-change's detail: the history after a turn. */
export interface TrickleChatChangeDetail {
  messages: TrickleChatMessage[];
}

/** <trickle-chat>: a conversation; each turn is the reader's message and a
 *  <trickle-answer>, under a composer. Its attributes
 *  (TrickleChatAttributes) are handed to each answer. */
export declare class TrickleChat extends HTMLElement {
  /** The history (a copy); setting it shows a stored thread: its newest turns at once, the older ones in idle-time batches. */
  get messages(): TrickleChatMessage[];
  set messages(list: TrickleChatMessage[]);
  /** True while an answer streams or a tool runs. */
  readonly busy: boolean;
  /** Client-side tools by name, declared in every request (OpenAI's tools). */
  tools: Record<string, TrickleChatTool>;
  /** tool_choice for every request; unset, the model decides. */
  toolChoice: TrickleToolChoice | undefined;
  /** What the chat sends, from its protocol attribute: "openai" (default)
   *  or "ai-sdk" (the AI SDK's DefaultChatTransport body, for a useChat
   *  route). */
  protocol: "openai" | "ai-sdk";
  /** The chat's id, sent as the AI SDK's chat id (protocol "ai-sdk"). */
  chatId: string;
  /** Extra request headers for every answer (e.g. Authorization). */
  headers: Record<string, string>;
  /** The chat's words (and its answers'), over TrickleAnswer.strings. */
  strings: Partial<TrickleStrings>;
  /** Sends the reader's message; resolves when the turn (and its tools) ended. */
  send(text: string): Promise<void>;
  /** Answers the last question again, in place of the last answer. */
  regenerate(): Promise<void>;
  /** Replaces the last question and answers it. */
  edit(text: string): Promise<void>;
  /** Stops the answer streaming now; it stays in the history, cut off. */
  stop(): void;
  /** Writes the page's words into the chat's own parts. */
  relabel(): void;

  addEventListener<K extends keyof TrickleChatEventMap>(
    type: K,
    listener: (this: TrickleChat, ev: TrickleChatEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener<K extends keyof TrickleAnswerEventMap>(
    type: K,
    listener: (this: TrickleChat, ev: TrickleAnswerEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener<K extends keyof HTMLElementEventMap>(
    type: K,
    listener: (this: TrickleChat, ev: HTMLElementEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof TrickleChatEventMap>(
    type: K,
    listener: (this: TrickleChat, ev: TrickleChatEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener<K extends keyof TrickleAnswerEventMap>(
    type: K,
    listener: (this: TrickleChat, ev: TrickleAnswerEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener<K extends keyof HTMLElementEventMap>(
    type: K,
    listener: (this: TrickleChat, ev: HTMLElementEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** What stats() reports (for tests): the Go side's elements, live
 *  js.Funcs and goroutines, the page's elements, Go's memory, where Go
 *  runs and the builds running. */
export interface TrickleStats {
  elements: number;
  funcs: number;
  goroutines: number;
  pageElements: number;
  /** Bytes of Go's heap in use (its spans), summed over the builds. */
  heapInuse: number;
  /** Bytes Go took from its WebAssembly memory. */
  goSys: number;
  /** The WebAssembly memory's size in bytes: it grows and never shrinks. */
  wasmMemory: number;
  /** Go's collections so far. */
  numGC: number;
  thread: "worker" | "main";
  builds: Array<"default" | "highlight">;
}

/** Resolves once the widget's WebAssembly side has started. */
export declare function ready(): Promise<void>;

/** The Go side's counts, for tests. */
export declare function stats(): Promise<TrickleStats>;

declare global {
  interface HTMLElementTagNameMap {
    "trickle-answer": TrickleAnswer;
    "trickle-chat": TrickleChat;
  }
  // The events bubble and are composed: a listener on any ancestor, the
  // document or the window hears them too.
  interface HTMLElementEventMap extends TrickleAnswerEventMap, TrickleChatEventMap {}
  interface DocumentEventMap extends TrickleAnswerEventMap, TrickleChatEventMap {}
  interface WindowEventMap extends TrickleAnswerEventMap, TrickleChatEventMap {}
}
