// Summarises bench/results/sse.jsonl as a markdown table: each
// implementation's best run per chunk size, and its ratio to the peer
// (eventsource-parser from bytes, the same job).
import {readFileSync} from 'node:fs'

const rows = readFileSync(process.argv[2], 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
const best = new Map()
for (const r of rows) {
  const key = `${r.impl}\u0000${r.chunk}`
  if (!best.has(key) || best.get(key).mb_per_s < r.mb_per_s) best.set(key, r)
}
const peer = 'eventsource-parser (Node, TextDecoder + feed)'
const peerStrings = 'eventsource-parser (Node, feed on pre-decoded strings)'
const chunks = [...new Set(rows.map((r) => r.chunk))].sort((a, b) => a - b)
console.log('| decoder | chunk | MB/s (CPU) | events/s | allocs/event | × peer (bytes) | × peer (strings) |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const chunk of chunks) {
  const base = best.get(`${peer}\u0000${chunk}`)
  const baseS = best.get(`${peerStrings}\u0000${chunk}`)
  for (const r of [...best.values()].filter((x) => x.chunk === chunk)) {
    const allocs = r.allocs_per_event === undefined ? 'n/a' : r.allocs_per_event.toFixed(3)
    console.log(
      `| ${r.impl} | ${chunk / 1024} KiB | ${r.mb_per_s.toFixed(0)} | ${(r.events_per_s / 1e6).toFixed(2)} M | ${allocs} | ` +
        `${base ? (r.mb_per_s / base.mb_per_s).toFixed(2) : '?'} | ${baseS ? (r.mb_per_s / baseS.mb_per_s).toFixed(2) : '?'} |`,
    )
  }
}
