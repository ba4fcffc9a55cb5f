// An AI SDK chat route as the AI SDK's docs write one (app/api/chat/route.ts,
// POST below: unchanged but for the mock model and the tool), served with a
// page that has <trickle-chat protocol="ai-sdk"> on it:
//
//   /                 index.html
//   /trickle/...      the widget's files (WIDGET_DIR)
//   POST /api/chat    the route
//
//   node server.mjs WIDGET_DIR [JWT_SECRET]
//
// With JWT_SECRET the app's server checks, before the route runs (as a
// framework's middleware would), that the request carries a JWT (HS256)
// signed with it, and answers 401 otherwise (examples/frameworks'
// pairwise suite runs the route under auth).
//
// The model is the package's own mock (MockLanguageModelV3, or V4 on
// the current major: AI_SDK below). What it says
// depends on the prompt the route built with convertToModelMessages:
// after a tool's result, a sentence with that result; for "weather", its
// reasoning, a sentence and a call of get_weather (a client-side tool: the
// route declares it without execute, the page runs it); for "book", a call
// of book_table (a server-side tool with needsApproval); for "long", a
// slow answer that a Stop cuts; otherwise its reasoning and a greeting.
//
// It listens on a free loopback port and prints "listening URL", then for
// wasm/e2e/aisdk_route_test.go: "request {json}" for each POST body as it
// arrived, "prompt {json}" for the prompt the model got, "error {json}"
// when the route threw, "closed {}" when a client went away before its
// answer ended, "booked {json}" when book_table ran, and "cancelled {}"
// when that ended the model's generation
// (the route, as the docs write it, passes no abortSignal to streamText:
// whether it ends is the AI SDK's business). It runs until it is killed.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createReadStream, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, sep } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
// AI_SDK names the package the route runs on: "ai" (the 6 major, by
// default) or "ai7" (the current major, installed under that alias); the
// route is the same on both, the mock model the major's own.
const AI_SDK = process.env.AI_SDK || "ai";
const { convertToModelMessages, streamText, tool } = await import(AI_SDK);
const aiTest = await import(AI_SDK + "/test");
const MockLanguageModel = aiTest.MockLanguageModelV4 ?? aiTest.MockLanguageModelV3;
import { z } from "zod";

const [widgetDir, jwtSecret] = process.argv.slice(2);
if (!widgetDir) {
  console.error("usage: node server.mjs WIDGET_DIR");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
// Which release of the AI SDK answers, for the test to check.
const sdkVersion = JSON.parse(readFileSync(join(here, "node_modules", AI_SDK, "package.json"), "utf8")).version;
console.log("sdk " + JSON.stringify({ name: AI_SDK, version: sdkVersion }));

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 15, reasoning: 5 } };

// chunks cuts text into runs of n code points.
function chunks(text, n) {
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(""));
  return out;
}

// reply is what the mock model streams for a prompt.
function reply(prompt) {
  const last = prompt[prompt.length - 1];
  const parts = [{ type: "stream-start", warnings: [] }];
  const say = (id, text) => {
    parts.push({ type: "text-start", id });
    for (const delta of chunks(text, 4)) parts.push({ type: "text-delta", id, delta });
    parts.push({ type: "text-end", id });
  };
  const think = (text) => {
    parts.push({ type: "reasoning-start", id: "r1" });
    for (const delta of chunks(text, 5)) parts.push({ type: "reasoning-delta", id: "r1", delta });
    parts.push({ type: "reasoning-end", id: "r1" });
  };
  if (last?.role === "tool") {
    const result = last.content.find((p) => p.type === "tool-result");
    say("t1", "The tool said: " + JSON.stringify(result?.output?.value ?? result?.output) + ".");
    parts.push({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
    return { parts, delayMs: 2 };
  }
  const text = (last?.content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
  if (/weather/i.test(text)) {
    think("The reader wants the weather; the page's tool knows it.");
    say("t1", "Let me check the weather.");
    parts.push({ type: "tool-input-start", id: "call_1", toolName: "get_weather" });
    parts.push({ type: "tool-input-delta", id: "call_1", delta: '{"city":' });
    parts.push({ type: "tool-input-delta", id: "call_1", delta: '"Lyon"}' });
    parts.push({ type: "tool-input-end", id: "call_1" });
    parts.push({ type: "tool-call", toolCallId: "call_1", toolName: "get_weather", input: '{"city":"Lyon"}' });
    parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage });
    return { parts, delayMs: 2 };
  }
  if (/book/i.test(text)) {
    // A server-side tool that asks first (needsApproval): the route sends
    // tool-approval-request, and runs or denies it on the next request.
    say("t1", "I can book that.");
    parts.push({ type: "tool-call", toolCallId: "call_book", toolName: "book_table", input: '{"restaurant":"Chez Nous","people":2}' });
    parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage });
    return { parts, delayMs: 2 };
  }
  if (/long/i.test(text)) {
    say("t1", "This answer goes on and on. ".repeat(400));
    parts.push({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
    return { parts, delayMs: 20 };
  }
  think("A greeting; I greet back.");
  say("t1", "Hello from the **AI SDK** route.");
  parts.push({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
  return { parts, delayMs: 2 };
}

// model is the mock language model: it streams reply(prompt), one part
// every delayMs, and says when its stream is cancelled before the end.
const model = new MockLanguageModel({
  doStream: async ({ prompt, abortSignal }) => {
    console.log("prompt " + JSON.stringify(prompt));
    const { parts, delayMs } = reply(prompt);
    let timer;
    let ended = false;
    const cancelled = () => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      console.log("cancelled {}");
    };
    return {
      stream: new ReadableStream({
        start(c) {
          abortSignal?.addEventListener("abort", () => {
            cancelled();
            try {
              c.close();
            } catch {}
          });
        },
        pull(c) {
          return new Promise((done) => {
            timer = setTimeout(() => {
              const p = parts.shift();
              if (p) c.enqueue(p);
              else {
                ended = true;
                c.close();
              }
              done();
            }, delayMs);
          });
        },
        cancel: cancelled,
      }),
    };
  },
});

const tools = {
  // A client-side tool: no execute, the page runs it (useChat's onToolCall;
  // here <trickle-chat>'s tools).
  get_weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
  }),
  // A server-side tool that asks the reader first.
  book_table: tool({
    description: "Book a table",
    inputSchema: z.object({ restaurant: z.string(), people: z.number() }),
    needsApproval: true,
    execute: async ({ restaurant, people }) => {
      console.log("booked " + JSON.stringify({ restaurant, people }));
      return { booked: restaurant, people };
    },
  }),
};

// POST is the route, as the AI SDK's docs write it.
export async function POST(req) {
  const { messages } = await req.json();

  const result = streamText({
    model,
    messages: await convertToModelMessages(messages),
    tools,
  });

  return result.toUIMessageStreamResponse();
}

// authorized says whether a request carries a JWT signed with jwtSecret
// that has not expired (always, without a secret).
function authorized(req) {
  if (!jwtSecret) return true;
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(req.headers.authorization ?? "");
  if (!m) return false;
  const want = createHmac("sha256", jwtSecret).update(m[1] + "." + m[2]).digest();
  const got = Buffer.from(m[3], "base64url");
  if (got.length !== want.length || !timingSafeEqual(got, want)) return false;
  try {
    const claims = JSON.parse(Buffer.from(m[2], "base64url").toString("utf8"));
    return JSON.parse(Buffer.from(m[1], "base64url").toString("utf8")).alg === "HS256" && !(claims.exp * 1000 < Date.now());
  } catch {
    return false;
  }
}

// handle runs the route on a Node request, as a framework would: a fetch
// Request in (aborted when the client goes away), the Response out, each
// chunk written as it comes.
async function handle(req, res) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  console.log("request " + JSON.stringify({ body: raw }));
  if (!authorized(req)) {
    console.log("refused " + JSON.stringify({ status: 401 }));
    return res.writeHead(401, { "Content-Type": "text/plain" }).end("Unauthorized\n");
  }
  const gone = new AbortController();
  res.on("close", () => {
    if (res.writableFinished) return;
    console.log("closed {}");
    gone.abort();
  });
  let response;
  try {
    response = await POST(new Request("http://localhost" + req.url, { method: "POST", headers: req.headers, body: raw, signal: gone.signal }));
  } catch (err) {
    console.log("error " + JSON.stringify({ message: String(err?.message ?? err) }));
    return res.writeHead(500, { "Content-Type": "text/plain" }).end("Internal Server Error\n");
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  const body = Readable.fromWeb(response.body);
  res.on("close", () => body.destroy());
  body.pipe(res);
}

const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

function file(res, full) {
  let st;
  try {
    st = statSync(full);
  } catch {
    return res.writeHead(404).end("not found\n");
  }
  if (!st.isFile()) return res.writeHead(404).end("not a file\n");
  res.writeHead(200, { "Content-Type": types[extname(full)] ?? "application/octet-stream", "Content-Length": st.size, "Cache-Control": "no-store" });
  createReadStream(full).pipe(res);
}

const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
  if (req.method === "POST" && path === "/api/chat") return handle(req, res);
  if (req.method !== "GET" && req.method !== "HEAD") return res.writeHead(405).end("GET or POST\n");
  if (path === "/") return file(res, join(here, "index.html"));
  if (path.startsWith("/trickle/")) {
    const full = normalize(join(widgetDir, path.slice("/trickle/".length)));
    if (!full.startsWith(normalize(widgetDir) + sep)) return res.writeHead(403).end("outside the served folder\n");
    return file(res, full);
  }
  res.writeHead(404).end("not found\n");
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
