// A page's own backend in plain Node, no relay and no dependencies: it
// serves a folder (a built app, or a page with its node_modules) and
// streams an answer on POST /api/chat as OpenAI chat completion chunks,
// the format the element reads from any OpenAI-compatible endpoint.
//
//   node backend.mjs DIR ANSWER_FILE
//
// It listens on a free loopback port and prints "listening URL", then one
// "GET /path" line for every file it serves (frameworks_test.go counts the
// .wasm a page fetched from them). It runs until it is killed.
import { createReadStream, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";

const [root, answerFile] = process.argv.slice(2);
if (!root || !answerFile) {
  console.error("usage: node backend.mjs DIR ANSWER_FILE");
  process.exit(2);
}
const answer = readFileSync(answerFile, "utf8");

const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
};

// chat streams the answer a few characters an event, flushed one by one,
// then the finish reason and [DONE]. It cuts on code points, never inside
// a character.
function chat(req, res) {
  req.resume(); // the request body (the prompt) is not needed
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
  const chars = Array.from(answer);
  let i = 0;
  const timer = setInterval(() => {
    if (i >= chars.length) {
      clearInterval(timer);
      res.end('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
      return;
    }
    const content = chars.slice(i, i + 5).join("");
    i += 5;
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);
  }, 2);
  res.on("close", () => clearInterval(timer));
}

function file(req, res) {
  let path = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
  if (path.endsWith("/")) path += "index.html";
  const full = normalize(join(root, path));
  if (full !== normalize(root) && !full.startsWith(normalize(root) + sep)) {
    res.writeHead(403).end("outside the served folder\n");
    return;
  }
  let st;
  try {
    st = statSync(full);
  } catch {
    res.writeHead(404).end("not found\n");
    return;
  }
  if (!st.isFile()) {
    res.writeHead(404).end("not a file\n");
    return;
  }
  console.log("GET " + path);
  res.writeHead(200, {
    "Content-Type": types[extname(full)] ?? "application/octet-stream",
    "Content-Length": st.size,
    "Cache-Control": "no-store",
  });
  createReadStream(full).pipe(res);
}

const server = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/api/chat") return chat(req, res);
  if (req.method === "GET" || req.method === "HEAD") return file(req, res);
  res.writeHead(405).end("GET or POST /api/chat\n");
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
