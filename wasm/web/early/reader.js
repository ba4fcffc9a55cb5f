// The early reader: the answer's plain text out of a response body's bytes,
// for the early view that a first visit shows while the widget's .wasm is
// still on its way (docs/notes/early-view.md). Go's pipeline (sse/, stream/)
// reads the same bytes from the first one when it starts and replaces
// whatever is shown here, so this reader only has to be right, never
// complete: it knows the text deltas of each dialect and nothing else, and
// at the first event it is not sure about it stops (the early view then
// shows less than Go would, never other text). Tested against the Go
// decoders' recordings (reader.test.js, testdata/golden.json).
//
// No dependencies: the page runs it (early.js, bundled into the loader)
// before Go exists.

// Events longer than this stop the reader: Go drops events over its bound
// (stream.DefaultMaxEventSize, in bytes), and no first token is this long.
const MAX_EVENT = 256 * 1024;

const ANTHROPIC = /^(message_(start|delta|stop)|content_block_(start|delta|stop)|ping)$/;

// The framing a Content-Type chooses, as stream.framingOf reads it: its
// media type, lower-cased, before any parameter.
const NDJSON_TYPES = /^application\/(x-ndjson|ndjson|jsonl|x-jsonlines|jsonlines|json)$/;
const TEXT_TYPES = /^text\/(plain|markdown)$/;
const mediaType = (ct) => (ct ?? "").split(";")[0].trim().toLowerCase();

// The AI SDK's UI message stream parts (stream.isAISDKPart): those that
// carry nothing shown, then those with text or an end.
const AISDK_QUIET = /^(start|start-step|finish-step|text-start|text-end|reasoning-start|reasoning-end|reasoning-delta|source-url|source-document|file|reasoning-file|message-metadata|custom|steering-message|tool-input-(start|delta|available|error)|tool-output-(available|error|denied)|tool-approval-(request|response)|data-.*)$/;
const AISDK = /^(text-delta|abort|finish)$/;

// AG-UI's event types (stream.isAGUIType): those that carry nothing shown
// here, then the text ones. RUN_FINISHED, RUN_ERROR and a type not known
// here stop.
const AGUI_QUIET = /^(RUN_STARTED|TEXT_MESSAGE_END|STATE_(SNAPSHOT|DELTA)|MESSAGES_SNAPSHOT|ACTIVITY_(SNAPSHOT|DELTA)|RAW|CUSTOM|STEP_(STARTED|FINISHED)|SUBAGENT_(STARTED|FINISHED|ERROR)|REASONING_(START|END|MESSAGE_(START|END|CONTENT|CHUNK)|ENCRYPTED_VALUE)|THINKING_(START|END|TEXT_MESSAGE_(START|END|CONTENT))|TOOL_CALL_(START|ARGS|END|CHUNK|RESULT))$/;
const AGUI = /^(TEXT_MESSAGE_(START|CONTENT|CHUNK)|RUN_FINISHED|RUN_ERROR)$/;

// earlyReader returns a reader for one response: head(get) gives it the
// response's headers (get is Headers.get) before the first byte;
// write(bytes) feeds the next chunk and returns the text it adds ("" when
// none); text is all of it so far; stopped says the reader has stopped for
// good (the answer ended, or it met something it does not know). dialect
// is the element's dialect attribute ("" or "auto" detects it as Go does).
export function earlyReader(dialect = "") {
  const utf8 = new TextDecoder();
  let want = dialect === "auto" ? "" : dialect;
  let ndjson = null; // the framing, once the content type or the first non-blank byte says
  let plainText = want === "text"; // the body is the text (stream.FramingText)
  const parts = []; // the unfinished line, in pieces
  let held = 0; // their length
  let skipLF = false; // a CR ended the last chunk: a LF after it is that line's end
  let type = "";
  let data = "";
  let out = "";
  const r = {
    text: "",
    stopped: !["", "openai", "responses", "anthropic", "gemini", "ollama", "plain", "text", "ai-sdk", "ag-ui"].includes(want),
    head(get) {
      const mt = mediaType(get("content-type"));
      if (TEXT_TYPES.test(mt)) {
        if (!want) plainText = true;
        return;
      }
      if (mt === "text/event-stream") ndjson = false;
      else if (NDJSON_TYPES.test(mt)) ndjson = true;
      if (!want && get("x-vercel-ai-ui-message-stream")) {
        want = "ai-sdk";
        ndjson = false;
      }
    },
    write(bytes) {
      if (r.stopped) return "";
      out = "";
      let s = utf8.decode(bytes, { stream: true });
      if (plainText) {
        // Go reads each byte that is not UTF-8 as U+FFFD, TextDecoder a
        // whole broken sequence as one: past the first, the texts may
        // differ, so the early view stops.
        const bad = s.indexOf("\ufffd");
        if (bad >= 0) {
          out = s.slice(0, bad);
          r.stopped = true;
        } else out = s;
        return take();
      }
      if (ndjson === null) {
        const i = s.search(/[^ \t\r\n\ufeff]/);
        if (i < 0) return "";
        ndjson = s[i] === "{";
      }
      if (skipLF && s[0] === "\n") s = s.slice(1);
      if (s) skipLF = false;
      // Only the new text is searched for line ends, and the unfinished
      // line is kept in pieces: a long line in small chunks costs linear
      // time.
      const eol = ndjson ? /\n/g : /\r\n?|\n/g;
      let start = 0;
      for (let m; (m = eol.exec(s)); ) {
        parts.push(s.slice(start, m.index));
        line(parts.join(""));
        parts.length = 0;
        held = 0;
        if (r.stopped) return take();
        if (m[0] === "\r" && m.index + 1 === s.length) skipLF = true;
        start = m.index + m[0].length;
      }
      if (start < s.length) {
        parts.push(s.slice(start));
        held += s.length - start;
      }
      if (held + data.length > MAX_EVENT) stop();
      return take();
    },
  };
  const take = () => {
    r.text += out;
    return out;
  };
  const stop = () => {
    r.stopped = true;
    parts.length = 0;
    data = "";
  };

  // line is one line of the body: an NDJSON object, or an SSE field
  // (WHATWG HTML, "Interpreting an event stream").
  function line(l) {
    if (ndjson) {
      if (/\S/.test(l)) event("", l);
      return;
    }
    if (l === "") {
      if (data) event(type, data.slice(0, -1));
      type = data = "";
      return;
    }
    if (l[0] === ":") return;
    const c = l.indexOf(":");
    const field = c < 0 ? l : l.slice(0, c);
    let value = c < 0 ? "" : l.slice(c + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data += value + "\n";
  }

  // event is one SSE event or NDJSON line: its text, if any, goes out.
  function event(t, d) {
    if (t === "trickle.status") return stop(); // the relay's own word: Go's to show
    const done = d.trim() === "[DONE]";
    let o = null;
    if (!done) {
      try {
        o = JSON.parse(d);
      } catch {
        return; // Go skips an event it cannot read, and so does this
      }
      if (typeof o !== "object" || o === null || Array.isArray(o)) return;
    }
    if (!want) {
      want = detect(t, o, done);
      if (!want) return;
    }
    const text = done ? null : DIALECTS[want](o, t);
    if (typeof text !== "string" || (text.isWellFormed && !text.isWellFormed())) return stop();
    out += text;
    // Ollama's done:true ends the answer after its own text.
    if (want === "ollama" && o.done === true) stop();
  }

  // detect is stream.Detect: the first event that names its dialect.
  function detect(t, o, done) {
    const ty = typeof o?.type === "string" ? o.type : "";
    if (ANTHROPIC.test(t) || ANTHROPIC.test(ty)) return "anthropic";
    if (t.startsWith("response.") || ty.startsWith("response.")) return "responses";
    if (done) return "openai";
    if (AGUI_QUIET.test(ty) || AGUI.test(ty)) return "ag-ui";
    if (AISDK_QUIET.test(ty) || AISDK.test(ty) || (ty === "error" && "errorText" in o)) return "ai-sdk";
    if (ty === "error" || "error" in o) return "error";
    if ("choices" in o || o.object === "chat.completion.chunk") return "openai";
    if ("candidates" in o || "usageMetadata" in o || "promptFeedback" in o) return "gemini";
    if ("done" in o || ("message" in o && "created_at" in o)) return "ollama";
    if (typeof o.delta === "string") return "plain";
    return ndjson ? "ollama" : "";
  }
  return r;
}

// str is v when it is a string, "" when it is absent, and null (stop)
// when it is anything else: Go's decoders skip an event whose field has
// the wrong type, text and all.
const str = (v) => (v === undefined || v === null ? "" : typeof v === "string" ? v : null);

// firsts are the elements of index 0 of a choices or candidates array,
// the ones Go reads (n > 1 asks for answers the widget does not show), or
// null when the array is not one.
const firsts = (list) => (list === undefined ? [] : Array.isArray(list) ? list.filter((c) => (c?.index ?? 0) === 0) : null);

// join is the text of a list of parts, or null when one is not sure.
const join = (parts, f) => {
  if (parts === null) return null;
  let s = "";
  for (const p of parts) {
    const t = f(p);
    if (t === null) return null;
    s += t;
  }
  return s;
};

// geminiPart is the text of one part: "" for a function call or a thought
// (Go's thinking, not the answer).
const geminiPart = (p) => {
  if (p?.functionCall) return "";
  if (p?.thought === true) return "";
  return p?.thought === undefined || p?.thought === false ? str(p?.text) : null;
};

// DIALECTS give an event's text delta: a string ("" when it has none), or
// anything else to stop (an end, an error, a shape not known here).
const DIALECTS = {
  error: () => null,
  openai: (o) =>
    o.error
      ? null
      : join(firsts(o.choices), (c) => {
          const a = str(c?.delta?.content);
          const b = str(c?.delta?.refusal);
          return a === null || b === null ? null : a + b;
        }),
  responses(o, t) {
    const ty = o.type || t;
    if (ty === "response.output_text.delta" || ty === "response.refusal.delta") return str(o.delta);
    return /^response\.(completed|incomplete|failed)$|^error$/.test(ty) ? null : "";
  },
  anthropic(o, t) {
    const ty = o.type || t;
    if (ty === "content_block_start") {
      const b = o.content_block;
      return b?.type === "text" ? str(b.text) : b ? "" : null;
    }
    if (ty === "content_block_delta") return o.delta?.type === "text_delta" ? str(o.delta.text) : o.delta ? "" : null;
    return ANTHROPIC.test(ty) && ty !== "message_stop" ? "" : null;
  },
  gemini(o) {
    if (o.error || (o.promptFeedback?.blockReason && !o.candidates?.length)) return null;
    return join(firsts(o.candidates), (c) => {
      const parts = c?.content?.parts;
      return join(parts === undefined ? [] : Array.isArray(parts) ? parts : null, geminiPart);
    });
  },
  ollama(o) {
    if (o.error !== undefined && o.error !== null && o.error !== "" && o.error !== "null") return null;
    const a = str(o.response);
    const b = str(o.message?.content);
    if (a === null || b === null || (o.done !== undefined && typeof o.done !== "boolean")) return null;
    return a + b;
  },
  plain(o) {
    if (o.error !== undefined && o.error !== null && o.error !== "null") return null;
    return typeof o.delta === "string" ? o.delta : "";
  },
  // The UI message stream: text-delta's delta is the answer; reasoning is
  // Go's thinking, tools Go's panel; an end, an error or a part not known
  // here stops.
  "ai-sdk"(o) {
    const ty = typeof o.type === "string" ? o.type : "";
    if (ty === "text-delta") return str(o.delta);
    return AISDK_QUIET.test(ty) ? "" : null;
  },
  // AG-UI: the assistant's text messages are the answer. A message of
  // another role (Go leaves it out), an end, an error or a type not known
  // here stops.
  "ag-ui"(o) {
    const ty = typeof o.type === "string" ? o.type : "";
    const role = o.role;
    if (/^TEXT_MESSAGE_(START|CHUNK)$/.test(ty) && role !== undefined && role !== null && role !== "assistant") return null;
    if (ty === "TEXT_MESSAGE_CONTENT" || ty === "TEXT_MESSAGE_CHUNK") return str(o.delta);
    return AGUI_QUIET.test(ty) || ty === "TEXT_MESSAGE_START" ? "" : null;
  },
};
