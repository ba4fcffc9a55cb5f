// The early request: what Go's widget.Command.Request builds for an ask()
// over fetch (wasm/element/command.go, request.go), in JavaScript, so
// that a first visit sends the request while the .wasm is still on its way.
// The same bytes as Go's, checked against the fixtures Go writes
// (testdata/requests.json, wasm/element/early_request_test.go): Go
// adopts this request's response as if it had sent it.

import { KIND_ASK } from "../contract.js";

// json writes a value as Go's jsonx does (encoding/json's escaping):
// JSON.stringify's text with <, >, &, U+2028 and U+2029 escaped.
const json = (v) => JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

// byBytes orders strings as Go's sort of strings does: by their UTF-8
// bytes, which is code point order (JavaScript's < compares UTF-16 units).
function byBytes(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < x.length && i < y.length; i++) {
    if (x[i] !== y[i]) return x[i].codePointAt(0) - y[i].codePointAt(0);
  }
  return x.length - y.length;
}

const wellFormed = (s) => typeof s !== "string" || !s.isWellFormed || s.isWellFormed();

function sameOrigin(url, origin) {
  try {
    return typeof origin === "string" && new URL(url).origin === origin.toLowerCase();
  } catch {
    return false;
  }
}

// earlyRequest is the fetch Go would start for an ask command (the object
// trickle.js sends as JSON): { url, init: { method, headers, body } }, or
// null when it is not one this file builds the same way — a WebSocket
// transport, an argument Go rejects, a string Go would read differently
// (a lone surrogate) — and Go is left to decide.
export function earlyRequest(cmd) {
  if (cmd.t !== KIND_ASK || cmd.transport === "websocket") return null;
  // A model only when the page named one (the model attribute, for a
  // prompt); a body is the page's whole request, with stream: true.
  const model = cmd.model || "";
  let body;
  if (typeof cmd.prompt === "string") {
    if (!wellFormed(cmd.prompt) || !wellFormed(model)) return null;
    const named = model ? `,"model":${json(model)}` : "";
    body = `{"messages":[{"content":${json(cmd.prompt)},"role":"user"}]${named},"stream":true}`;
  } else if (cmd.body && typeof cmd.body === "object" && !Array.isArray(cmd.body)) {
    const o = { ...cmd.body, stream: true };
    const keys = Object.keys(o);
    if (!keys.every(wellFormed)) return null;
    body = `{${keys.sort(byBytes).map((k) => `${json(k)}:${json(o[k])}`).join(",")}}`;
  } else {
    return null;
  }
  // The body is JSON and the answer SSE whatever the page's headers say.
  const headers = (cmd.headers ?? []).filter(([k]) => !/^(content-type|accept)$/i.test(k));
  headers.push(["Content-Type", "application/json"], ["Accept", "text/event-stream"]);
  // The widget resumes a cut stream, and says so to its own origin (no
  // CORS preflight); Go also says so to origins that answered as a relay
  // (widget.DeclaresResume), which it has seen none of before it runs.
  if (sameOrigin(cmd.url, cmd.origin) && !headers.some(([k]) => /^x-trickle-resume$/i.test(k))) headers.push(["X-Trickle-Resume", "on"]);
  return { url: cmd.url, init: { method: "POST", headers, body } };
}
