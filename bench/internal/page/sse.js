// readSSE is the plain client the peers get in the benchmarks (served at
// /shared/sse.js by bench/internal/paced): POST request as JSON to url,
// decode the body, split its events, JSON.parse each OpenAI chunk and hand
// over its content delta, until [DONE] or the body's end.
export async function readSSE(url, request, onDelta) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of block.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") return;
        const delta = JSON.parse(data).choices?.[0]?.delta?.content;
        if (delta) onDelta(delta);
      }
    }
  }
}
