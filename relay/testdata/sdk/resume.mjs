// Resumes a stream on a relay as application code that reconnects does
// (GET /v1/streams/{id} with Last-Event-ID), reading it with the openai
// package's own stream parser (Stream.fromSSEResponse), and prints how it
// ended as JSON, like sdk.mjs. It prints the line "reading" first, once
// the first chunk came, so a test can act while the stream is being read.
//
//   node resume.mjs STREAM_URL LAST_EVENT_ID
import { Stream } from "openai/streaming";

const [url, last] = process.argv.slice(2);
const out = { chunks: 0, text: "", threw: false, error: null };
try {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { "Last-Event-ID": last, Accept: "text/event-stream" }, signal: controller.signal });
  if (!response.ok) throw new Error(`the resume answered ${response.status}`);
  for await (const chunk of Stream.fromSSEResponse(response, controller)) {
    if (out.chunks++ === 0) process.stdout.write("reading\n");
    out.text += chunk.choices[0]?.delta?.content ?? "";
  }
} catch (err) {
  out.threw = true;
  out.error = { name: err?.constructor?.name ?? "", status: err?.status ?? 0, code: err?.code ?? "", message: String(err?.message ?? err) };
}
process.stdout.write(JSON.stringify(out) + "\n");
