// Reads one streamed chat completion from a relay with the official openai
// package, as application code does, and prints how it ended as JSON:
// {chunks, text, threw, error: {name, status, code, message}}.
//
//   node sdk.mjs BASE_URL QUERY [STOP_AFTER]
//
// QUERY is the relay's query string (the simulated model's parameters);
// with STOP_AFTER, the script stops the stream (DELETE /v1/streams/{id},
// the id from the response's X-Trickle-Stream) once that many chunks came,
// and reads on to see how the stream ends.
import OpenAI from "openai";

const [base, query = "", stopAfter] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "not-used-by-the-relay", maxRetries: 0, timeout: 20000 });
const out = { chunks: 0, text: "", threw: false, error: null };
try {
  const { data: stream, response } = await client.chat.completions
    .create(
      { model: "sim", stream: true, messages: [{ role: "user", content: "hello" }] },
      { query: Object.fromEntries(new URLSearchParams(query)) },
    )
    .withResponse();
  const id = response.headers.get("x-trickle-stream");
  for await (const chunk of stream) {
    out.chunks++;
    // Ordinary client code: it would throw a TypeError on a chunk that is
    // not a completion chunk.
    out.text += chunk.choices[0]?.delta?.content ?? "";
    if (stopAfter !== undefined && out.chunks === Number(stopAfter)) {
      const r = await fetch(`${base}/v1/streams/${encodeURIComponent(id)}`, { method: "DELETE" });
      if (!r.ok) throw new Error(`DELETE answered ${r.status}`);
    }
  }
} catch (err) {
  out.threw = true;
  out.error = { name: err?.constructor?.name ?? "", status: err?.status ?? 0, code: err?.code ?? "", message: String(err?.message ?? err) };
}
process.stdout.write(JSON.stringify(out) + "\n");
