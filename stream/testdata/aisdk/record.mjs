// Records what the AI SDK's own server helpers send, as fixtures for the
// stream package's ai-sdk and text dialects: streamText over the package's
// mock model (ai/test), answered with toUIMessageStreamResponse (the UI
// message stream useChat reads) and toTextStreamResponse (text/plain).
//
//   node record.mjs DIR   writes the bodies into DIR (stream/testdata) and
//                         their headers into DIR/aisdk/headers.json
//
// Nothing here is random or timed: the same pinned package writes the
// same bytes (stream/aisdk_fixtures_test.go checks the committed files
// against a fresh run).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { simulateReadableStream, streamText, tool } from "ai";
import { MockLanguageModelV2 } from "ai/test";
import { z } from "zod";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node record.mjs DIR");
  process.exit(2);
}

const usage = { inputTokens: 31, outputTokens: 57, totalTokens: 88 };

// model streams the given language-model parts, at once.
const model = (parts) =>
  new MockLanguageModelV2({
    doStream: async () => ({
      stream: simulateReadableStream({ chunks: [{ type: "stream-start", warnings: [] }, ...parts], initialDelayInMs: null, chunkDelayInMs: null }),
    }),
  });

const text = (id, ...deltas) => [{ type: "text-start", id }, ...deltas.map((delta) => ({ type: "text-delta", id, delta })), { type: "text-end", id }];

// The markdown answer, in deltas cut mid-word and mid-line.
const markdown = text(
  "t1",
  "## Brewing gre",
  "en tea\n\nUse water at **80 °C** — never boiling 🍵.\n\n",
  "1. Warm the pot.\n2. Add 2 g of lea",
  "ves a cup (日本茶 too).\n3. Steep for *two* minutes.\n\n",
  "| step | time |\n| --- | --- |\n| steep | 2 min |\n",
);

const weather = tool({
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 21, sky: "clear" }),
});

const recordings = [
  {
    file: "ai-sdk-markdown.sse",
    respond: () => streamText({ model: model([...markdown, { type: "finish", finishReason: "stop", usage }]), prompt: "How do I brew green tea?" }).toUIMessageStreamResponse(),
  },
  {
    file: "text-ai-sdk.txt",
    respond: () => streamText({ model: model([...markdown, { type: "finish", finishReason: "stop", usage }]), prompt: "How do I brew green tea?" }).toTextStreamResponse(),
  },
  {
    // Reasoning, text, then a tool call whose input streams and whose
    // output the server's tool gives.
    file: "ai-sdk-reasoning-tool.sse",
    respond: () =>
      streamText({
        model: model([
          { type: "reasoning-start", id: "r1" },
          { type: "reasoning-delta", id: "r1", delta: "The user asks about Paris. " },
          { type: "reasoning-delta", id: "r1", delta: "The weather tool can tell." },
          { type: "reasoning-end", id: "r1" },
          ...text("t1", "Let me check the weather in ", "*Paris*."),
          { type: "tool-input-start", id: "call_paris_1", toolName: "get_weather" },
          { type: "tool-input-delta", id: "call_paris_1", delta: '{"city":' },
          { type: "tool-input-delta", id: "call_paris_1", delta: '"Paris"}' },
          { type: "tool-input-end", id: "call_paris_1" },
          { type: "tool-call", toolCallId: "call_paris_1", toolName: "get_weather", input: '{"city":"Paris"}' },
          { type: "finish", finishReason: "tool-calls", usage },
        ]),
        prompt: "What is the weather in Paris?",
        tools: { get_weather: weather },
      }).toUIMessageStreamResponse({ sendReasoning: true }),
  },
  {
    // Sources (a web page and a document) and a file the model gives
    // with its answer, sent with sendSources.
    file: "ai-sdk-sources.sse",
    respond: () =>
      streamText({
        model: model([
          ...text("t1", "Green tea is best at **80 °C** [1], ", "as the guide says [2]."),
          { type: "source", sourceType: "url", id: "src_1", url: "https://example.com/green-tea", title: "Brewing green tea" },
          { type: "source", sourceType: "document", id: "src_2", mediaType: "application/pdf", title: "The tea guide", filename: "tea-guide.pdf" },
          { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=" },
          { type: "finish", finishReason: "stop", usage },
        ]),
        prompt: "How hot for green tea?",
      }).toUIMessageStreamResponse({ sendSources: true }),
  },
  {
    // The model fails after some text; the server shows its message.
    file: "ai-sdk-error.sse",
    respond: () =>
      streamText({
        model: model([...text("t1", "The first half of the ans", "wer, then"), { type: "error", error: new Error("The model is overloaded, try again") }]),
        prompt: "Tell me a story",
        onError: () => {},
      }).toUIMessageStreamResponse({ onError: (err) => (err instanceof Error ? err.message : String(err)) }),
  },
  {
    // The request is aborted mid-answer (its signal fires once the text
    // has been sent): the stream says abort.
    file: "ai-sdk-abort.sse",
    abortAfter: "Stopped mid",
    respond: (ctl) => {
      const parts = [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t1" }, { type: "text-delta", id: "t1", delta: "Stopped mid" }];
      const m = new MockLanguageModelV2({
        doStream: async () => ({
          stream: new ReadableStream({
            async pull(c) {
              const p = parts.shift();
              if (p) return c.enqueue(p);
              await new Promise((r) => ctl.signal.addEventListener("abort", r));
              c.close();
            },
          }),
        }),
      });
      return streamText({ model: m, prompt: "Go on", abortSignal: ctl.signal, onError: () => {} }).toUIMessageStreamResponse();
    },
  },
];

const headers = {};
for (const r of recordings) {
  const ctl = new AbortController();
  const res = r.respond(ctl);
  const chunks = [];
  const utf8 = new TextDecoder();
  let seen = "";
  for await (const chunk of res.body) {
    chunks.push(chunk);
    seen += utf8.decode(chunk, { stream: true });
    if (r.abortAfter && seen.includes(r.abortAfter) && !ctl.signal.aborted) ctl.abort();
  }
  const body = Buffer.concat(chunks);
  writeFileSync(join(dir, r.file), body);
  headers[r.file] = Object.fromEntries([...res.headers].sort(([a], [b]) => (a < b ? -1 : 1)));
}
mkdirSync(join(dir, "aisdk"), { recursive: true });
writeFileSync(join(dir, "aisdk", "headers.json"), JSON.stringify(headers, null, 2) + "\n");
