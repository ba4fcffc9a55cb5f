// A page's own backend in Node, with no relay: it serves index.html (a page
// that names everything relative to itself) under a path prefix, and
// answers it with the AI SDK's own server helpers over the package's mock
// model, as a useChat backend would:
//
//   PREFIX                  index.html
//   PREFIX/trickle/...      the widget's files (WIDGET_DIR)
//   PREFIX/preflight.css    the page's CSS reset (CSS_FILE)
//   POST PREFIX/api/ui      streamText(...).toUIMessageStreamResponse({ sendReasoning: true }):
//                           reasoning, the answer and a call of a weather tool
//                           the server runs (?delay_ms=N paces the parts)
//   POST PREFIX/api/text    streamText(...).toTextStreamResponse()
//   POST PREFIX/api/private 401 with an HTML body, as a proxy's login wall sends
//
//   node backend.mjs PREFIX WIDGET_DIR CSS_FILE ANSWER_FILE REASONING_FILE
//
// The mock model streams ANSWER_FILE's text (and REASONING_FILE's as its
// reasoning) a few characters a part. The backend listens on a free
// loopback port and prints "listening URL", then "request {json}" for each
// POST (its method, path and body as it arrived) before it answers, and
// "cancelled {json}" when a generation ended because its client went away,
// for wasm/e2e/anypage_test.go. It runs until it is killed.
import { createReadStream, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, sep } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { streamText, tool } from "ai";
import { MockLanguageModelV2 } from "ai/test";
import { z } from "zod";

const [prefix, widgetDir, cssFile, answerFile, reasoningFile] = process.argv.slice(2);
if (!prefix?.startsWith("/") || !prefix.endsWith("/") || !widgetDir || !cssFile || !answerFile || !reasoningFile) {
  console.error("usage: node backend.mjs /PREFIX/ WIDGET_DIR CSS_FILE ANSWER_FILE REASONING_FILE");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const answer = readFileSync(answerFile, "utf8");
const reasoning = readFileSync(reasoningFile, "utf8");

// pieces cuts text into runs of n code points (never inside a character).
function pieces(text, n) {
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(""));
  return out;
}

// model is the mock language model: reasoning and a call of the weather
// tool (when asked), the answer, then a finish, one part every delayMs
// milliseconds. A request whose client went away aborts the generation:
// the model's stream says "cancelled PATH" and ends.
function model(path, withReasoning, delayMs) {
  const parts = [{ type: "stream-start", warnings: [] }];
  if (withReasoning) {
    parts.push({ type: "reasoning-start", id: "r1" });
    for (const delta of pieces(reasoning, 7)) parts.push({ type: "reasoning-delta", id: "r1", delta });
    parts.push({ type: "reasoning-end", id: "r1" });
  }
  parts.push({ type: "text-start", id: "t1" });
  for (const delta of pieces(answer, 5)) parts.push({ type: "text-delta", id: "t1", delta });
  parts.push({ type: "text-end", id: "t1" });
  if (withReasoning) {
    parts.push({ type: "tool-input-start", id: "call_1", toolName: "get_weather" });
    parts.push({ type: "tool-input-delta", id: "call_1", delta: '{"city":' });
    parts.push({ type: "tool-input-delta", id: "call_1", delta: '"Kyoto"}' });
    parts.push({ type: "tool-input-end", id: "call_1" });
    parts.push({ type: "tool-call", toolCallId: "call_1", toolName: "get_weather", input: '{"city":"Kyoto"}' });
  }
  parts.push({ type: "finish", finishReason: withReasoning ? "tool-calls" : "stop", usage: { inputTokens: 12, outputTokens: 40, totalTokens: 52 } });
  return new MockLanguageModelV2({
    doStream: async ({ abortSignal }) => {
      let timer;
      return {
        stream: new ReadableStream({
          start(c) {
            abortSignal?.addEventListener("abort", () => {
              clearTimeout(timer);
              console.log("cancelled " + JSON.stringify({ path }));
              c.close();
            });
          },
          pull(c) {
            return new Promise((done) => {
              timer = setTimeout(() => {
                if (!abortSignal?.aborted) {
                  const p = parts.shift();
                  if (p) c.enqueue(p);
                  else c.close();
                }
                done();
              }, delayMs);
            });
          },
        }),
      };
    },
  });
}

const weather = tool({
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 18, sky: "light rain" }),
});

// prompt is the text of the body's last user message (the OpenAI-style
// messages the element sends).
function prompt(body) {
  const users = (body.messages ?? []).filter((m) => m.role === "user");
  const last = users[users.length - 1];
  return typeof last?.content === "string" ? last.content : "";
}

// send writes a fetch Response (what the AI SDK's helpers return) to
// Node's response, flushing each chunk as it comes.
async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  const body = Readable.fromWeb(response.body);
  res.on("close", () => body.destroy());
  body.pipe(res);
}

const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

// file serves one file, or says 404.
function file(res, full) {
  let st;
  try {
    st = statSync(full);
  } catch {
    return res.writeHead(404).end("not found\n");
  }
  if (!st.isFile()) return res.writeHead(404).end("not a file\n");
  res.writeHead(200, {
    "Content-Type": types[extname(full)] ?? "application/octet-stream",
    "Content-Length": st.size,
    "Cache-Control": "no-store",
  });
  createReadStream(full).pipe(res);
}

// under serves the path inside root, never outside it.
function under(res, root, path) {
  const full = normalize(join(root, path));
  if (!full.startsWith(normalize(root) + sep)) return res.writeHead(403).end("outside the served folder\n");
  file(res, full);
}

async function api(req, res, route) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  console.log("request " + JSON.stringify({ method: req.method, path: req.url, body: raw }));
  if (route === "private") {
    // No WWW-Authenticate: a Basic challenge makes the browser ask the
    // reader for a password before the page sees the response.
    res.writeHead(401, { "Content-Type": "text/html; charset=utf-8" });
    return res.end("<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center><hr><center>nginx</center></body></html>\n");
  }
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return res.writeHead(400, { "Content-Type": "text/plain" }).end("the body is not JSON\n");
  }
  // The generation ends when the client goes away, as a backend passes
  // its request's signal on (the response's close before its end).
  const gone = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  const url = new URL(req.url, "http://localhost");
  const delayMs = Number(url.searchParams.get("delay_ms") ?? 3);
  const ui = route === "ui";
  const result = streamText({
    model: model(url.pathname, ui, delayMs),
    prompt: prompt(body),
    tools: ui ? { get_weather: weather } : undefined,
    abortSignal: gone.signal,
    onError: () => {},
  });
  if (ui) return send(res, result.toUIMessageStreamResponse({ sendReasoning: true }));
  return send(res, result.toTextStreamResponse());
}

const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
  if (!path.startsWith(prefix)) return res.writeHead(404).end("not under " + prefix + "\n");
  const rest = path.slice(prefix.length);
  if (req.method === "POST") {
    const route = { "api/ui": "ui", "api/text": "text", "api/private": "private" }[rest];
    if (route) return api(req, res, route);
    return res.writeHead(404).end("no such route\n");
  }
  if (req.method !== "GET" && req.method !== "HEAD") return res.writeHead(405).end("GET or POST\n");
  if (rest === "") return file(res, join(here, "index.html"));
  if (rest === "preflight.css") return file(res, cssFile);
  if (rest.startsWith("trickle/")) return under(res, widgetDir, rest.slice("trickle/".length));
  res.writeHead(404).end("not found\n");
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
