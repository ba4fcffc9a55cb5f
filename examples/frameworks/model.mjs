// An OpenAI-compatible chat completions server in plain Node, no
// dependencies, that behaves as a real one does where the pairwise suite
// (pairwise_test.go) looks: it refuses what the API refuses, calls only
// the tools a request declares, streams with pauses (or answers one JSON
// completion when not asked to stream), and stops generating the moment
// its client goes away. It serves in one of two roles:
//
//   node model.mjs upstream KEY     POST /v1/chat/completions, the model a
//                                   relay calls with Authorization: Bearer KEY
//   node model.mjs backend [SECRET] POST /api/chat, the page's own backend
//                                   (no relay); with SECRET, every request
//                                   needs a JWT (HS256) signed with it
//
// What it answers depends on the last message: after a tool's result, one
// sentence with that result; for a question with "weather" in it and a
// declared tool, a call of the first declared tool with arguments made
// from its schema; for "long", a long answer streamed slowly; otherwise a
// short one. With stream_options.include_usage the last chunk carries the
// usage.
//
// It listens on a free loopback port and prints "listening URL", then one
// line per request: "request {json}" with the body as it arrived, "ended
// {json}" when an answer was sent whole, "cancelled {json}" when its client
// went away before the end (with the chunks it had sent), "refused {json}"
// with the status and the reason. It runs until it is killed.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const [role, secret] = process.argv.slice(2);
if (role !== "upstream" && role !== "backend") {
  console.error("usage: node model.mjs upstream KEY | backend [SECRET]");
  process.exit(2);
}
if (role === "upstream" && !secret) {
  console.error("model.mjs upstream needs the KEY the relay sends");
  process.exit(2);
}
const path = role === "upstream" ? "/v1/chat/completions" : "/api/chat";

// longParagraphs is how many paragraphs the long answer has; each is one
// chunk, LONG_GAP_MS apart.
const longParagraphs = 600;
const LONG_GAP_MS = 10;

// longAnswer is the long answer's text, for the suite's oracle: the test
// builds the same string.
export function longAnswer() {
  let s = "";
  for (let i = 1; i <= longParagraphs; i++) s += `Paragraph ${i} of the long answer goes on.\n\n`;
  return s;
}

function log(kind, value) {
  console.log(kind + " " + JSON.stringify(value));
}

// base64url decodes a JWT segment.
function base64url(s) {
  return Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}

// verifyJWT says why a bearer token is refused, or "" when it is an HS256
// JWT signed with key that has not expired.
function verifyJWT(header, key) {
  const m = /^Bearer (.+)$/i.exec(header ?? "");
  if (!m) return "no bearer token";
  const parts = m[1].split(".");
  if (parts.length !== 3) return "not a JWT";
  let head, claims;
  try {
    head = JSON.parse(base64url(parts[0]).toString("utf8"));
    claims = JSON.parse(base64url(parts[1]).toString("utf8"));
  } catch {
    return "not a JWT";
  }
  if (head.alg !== "HS256") return "not HS256";
  const want = createHmac("sha256", key).update(parts[0] + "." + parts[1]).digest();
  const got = base64url(parts[2]);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return "bad signature";
  if (typeof claims.exp === "number" && claims.exp * 1000 < Date.now()) return "expired";
  return "";
}

// refuse answers with OpenAI's error shape.
function refuse(res, status, message, param = null, code = null) {
  log("refused", { status, message });
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: status === 401 ? "authentication_error" : "invalid_request_error", param, code } }));
}

// check returns what a real API would refuse in the body, or "".
function check(body) {
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages must be a non-empty array";
  const calls = new Set();
  for (const [i, m] of body.messages.entries()) {
    if (!["system", "developer", "user", "assistant", "tool"].includes(m?.role)) return `messages[${i}].role is invalid`;
    if (m.role === "assistant") {
      const empty = m.content == null || m.content === "";
      if (empty && !(Array.isArray(m.tool_calls) && m.tool_calls.length)) return `messages[${i}]: an assistant message must have content or tool_calls`;
      for (const c of m.tool_calls ?? []) calls.add(c.id);
    }
    if (m.role === "tool" && !calls.has(m.tool_call_id)) return `messages[${i}]: a tool message must answer a preceding tool call`;
  }
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t?.type !== "function" || typeof t.function?.name !== "string") return `tools[${i}] must be {type: "function", function: {name, …}}`;
  }
  return "";
}

// argumentsFor makes arguments valid against a tool's parameter schema:
// every required property, strings "Lyon" for a city and "x" otherwise.
function argumentsFor(schema) {
  const out = {};
  for (const name of schema?.required ?? []) {
    const p = schema.properties?.[name] ?? {};
    if (p.type === "number" || p.type === "integer") out[name] = 1;
    else if (p.type === "boolean") out[name] = true;
    else if (Array.isArray(p.enum)) out[name] = p.enum[0];
    else out[name] = /city|location|place/i.test(name) ? "Lyon" : "x";
  }
  return out;
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p?.type === "text" ? p.text : "")).join("");
  return "";
}

// plan is what the model says: a list of deltas, the gap between them and
// the finish reason.
function plan(body) {
  const last = body.messages[body.messages.length - 1];
  if (last.role === "tool") {
    return { deltas: [{ content: "The tool said: " }, { content: text(last.content) }, { content: "." }], gap: 2, finish: "stop" };
  }
  const q = text(last.content);
  const tools = body.tools ?? [];
  if (/weather/i.test(q) && tools.length && body.tool_choice !== "none") {
    const t = tools[0].function;
    const args = JSON.stringify(argumentsFor(t.parameters));
    const half = Math.floor(args.length / 2);
    return {
      deltas: [
        { content: "Let me check." },
        { tool_calls: [{ index: 0, id: "call_w1", type: "function", function: { name: t.name, arguments: args.slice(0, half) } }] },
        { tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] },
      ],
      gap: 2,
      finish: "tool_calls",
    };
  }
  if (/long/i.test(q)) {
    return { deltas: longAnswer().split(/(?<=\n\n)/).map((content) => ({ content })), gap: LONG_GAP_MS, finish: "stop" };
  }
  return { deltas: ["Hello ", "from the ", "**model**."].map((content) => ({ content })), gap: 2, finish: "stop" };
}

async function answer(req, res) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  log("request", { body: raw, authorization: req.headers.authorization ?? "" });
  if (role === "upstream" && req.headers.authorization !== "Bearer " + secret) return refuse(res, 401, "Incorrect API key provided.", null, "invalid_api_key");
  if (role === "backend" && secret) {
    const why = verifyJWT(req.headers.authorization, secret);
    if (why) return refuse(res, 401, "Unauthorized: " + why);
  }
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return refuse(res, 400, "We could not parse the JSON body of your request.");
  }
  const bad = check(body);
  if (bad) return refuse(res, 400, bad, "messages");
  const { deltas, gap, finish } = plan(body);
  const id = "chatcmpl-" + Math.random().toString(36).slice(2);
  if (body.stream !== true) {
    // Not asked to stream: one chat.completion, as the API answers.
    const content = deltas.map((d) => d.content ?? "").join("") || null;
    const args = deltas.flatMap((d) => d.tool_calls ?? []).map((c) => c.function.arguments).join("");
    const first = deltas.find((d) => d.tool_calls)?.tool_calls[0];
    const message = { role: "assistant", content, ...(first ? { tool_calls: [{ id: first.id, type: "function", function: { name: first.function.name, arguments: args } }] } : {}) };
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ id, object: "chat.completion", model: body.model ?? "model-mjs", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: deltas.length, total_tokens: 10 + deltas.length } }));
    log("ended", { sent: deltas.length });
    return;
  }
  const chunk = (delta, finish_reason = null) => JSON.stringify({ id, object: "chat.completion.chunk", model: body.model ?? "model-mjs", choices: [{ index: 0, delta, finish_reason }] });
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
  let sent = 0;
  let done = false;
  let timer;
  res.on("close", () => {
    clearTimeout(timer);
    if (!done) log("cancelled", { sent, at: Date.now() });
  });
  const next = () => {
    if (res.destroyed) return;
    if (sent < deltas.length) {
      res.write(`data: ${chunk(deltas[sent])}\n\n`);
      sent++;
      timer = setTimeout(next, gap);
      return;
    }
    done = true;
    res.write(`data: ${chunk({}, finish)}\n\n`);
    if (body.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: deltas.length, total_tokens: 10 + deltas.length } })}\n\n`);
    }
    res.end("data: [DONE]\n\n");
    log("ended", { sent });
  };
  next();
}

const server = createServer((req, res) => {
  const url = new URL(req.url, "http://localhost");
  if (req.method === "POST" && url.pathname === path) return answer(req, res).catch((err) => refuse(res, 500, String(err)));
  res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
