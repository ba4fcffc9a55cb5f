// Records what the current major of the AI SDK (ai@7) sends, as fixtures
// for the stream package's ai-sdk dialect: streamText over the package's
// mock model (ai/test), answered with toUIMessageStreamResponse. The
// parts ai@5 does not have are here: a tool that asks the reader first
// (tool-approval-request), sources beside the text.
//
//   node record.mjs DIR   writes the bodies into DIR (stream/testdata) and
//                         their headers into DIR/aisdk7/headers.json
//
// Nothing here is random or timed: the same pinned package writes the
// same bytes (stream/aisdk_fixtures_test.go checks the committed files
// against a fresh run).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { simulateReadableStream, streamText, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node record.mjs DIR");
  process.exit(2);
}

const usage = {
  inputTokens: { total: 31, noCache: 31, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 57, text: 57, reasoning: 0 },
};

// model streams the given language-model parts, at once.
const model = (parts) =>
  new MockLanguageModelV4({
    doStream: async () => ({
      stream: simulateReadableStream({ chunks: [{ type: "stream-start", warnings: [] }, ...parts], initialDelayInMs: null, chunkDelayInMs: null }),
    }),
  });

const text = (id, ...deltas) => [{ type: "text-start", id }, ...deltas.map((delta) => ({ type: "text-delta", id, delta })), { type: "text-end", id }];

const finish = (unified) => ({ type: "finish", finishReason: { unified, raw: unified }, usage });

// book asks the reader before it runs.
const book = tool({
  description: "Book a table",
  inputSchema: z.object({ restaurant: z.string(), people: z.number() }),
  needsApproval: true,
  execute: async () => ({ booked: true }),
});

const recordings = [
  {
    // The model calls a tool that needs approval: the stream asks for it
    // and the step ends there.
    file: "ai-sdk7-approval.sse",
    respond: () =>
      streamText({
        model: model([
          ...text("t1", "I can book that for ", "you."),
          { type: "tool-input-start", id: "call_book_1", toolName: "book_table" },
          { type: "tool-input-delta", id: "call_book_1", delta: '{"restaurant":"Chez Nous",' },
          { type: "tool-input-delta", id: "call_book_1", delta: '"people":2}' },
          { type: "tool-input-end", id: "call_book_1" },
          { type: "tool-call", toolCallId: "call_book_1", toolName: "book_table", input: '{"restaurant":"Chez Nous","people":2}' },
          finish("tool-calls"),
        ]),
        prompt: "Book Chez Nous for two",
        tools: { book_table: book },
        // The approval's id is random otherwise.
        _internal: { generateId: () => "approval_1" },
      }).toUIMessageStreamResponse(),
  },
  {
    // Sources beside the text, sent with sendSources, and citations on
    // the text's end.
    file: "ai-sdk7-sources.sse",
    respond: () =>
      streamText({
        model: model([
          { type: "text-start", id: "t1" },
          { type: "text-delta", id: "t1", delta: "Green tea is best at **80 °C** [1]." },
          {
            // Citations on the text's end (ai@7): the span they cite and
            // its source, a second one cited only here.
            type: "text-end",
            id: "t1",
            citations: [
              { source: { type: "source", sourceType: "url", id: "src_1", url: "https://example.com/green-tea", title: "Brewing green tea" }, startIndex: 0, endIndex: 30, citedText: "Green tea is best at **80 °C**" },
              { source: { type: "source", sourceType: "document", id: "src_2", mediaType: "application/pdf", title: "The tea guide", filename: "tea-guide.pdf" }, startIndex: 0, endIndex: 9 },
            ],
          },
          { type: "source", sourceType: "url", id: "src_1", url: "https://example.com/green-tea", title: "Brewing green tea" },
          finish("stop"),
        ]),
        prompt: "How hot for green tea?",
      }).toUIMessageStreamResponse({ sendSources: true }),
  },
];

const headers = {};
for (const r of recordings) {
  const res = r.respond();
  const chunks = [];
  for await (const chunk of res.body) chunks.push(chunk);
  writeFileSync(join(dir, r.file), Buffer.concat(chunks));
  headers[r.file] = Object.fromEntries([...res.headers].sort(([a], [b]) => (a < b ? -1 : 1)));
}
mkdirSync(join(dir, "aisdk7"), { recursive: true });
writeFileSync(join(dir, "aisdk7", "headers.json"), JSON.stringify(headers, null, 2) + "\n");
