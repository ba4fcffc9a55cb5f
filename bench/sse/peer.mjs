// The peer side of bench/sse: eventsource-parser on Node decoding the same
// OpenAI-style stream as gobench, cut into the same chunk sizes, from bytes
// (a fetch() body delivers Uint8Array chunks, so the bytes are decoded with a
// streaming TextDecoder first, as every user of the package must). A second
// line per chunk size times feed() alone on pre-decoded strings: the
// package's best case. Prints one JSON line per measurement.
import {createParser} from 'eventsource-parser'

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')))
const mib = Number(args.mib ?? 50)
const runs = Number(args.runs ?? 7)
const chunks = (args.chunks ?? '1024,16384').split(',').map(Number)

const event = 'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n'
const n = Math.floor((mib << 20) / event.length)
const stream = new TextEncoder().encode(event.repeat(n))

function cpuSeconds() {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

function run(pieces, decode) {
  let events = 0
  let dataBytes = 0
  const parser = createParser({
    onEvent(e) {
      events++
      dataBytes += e.data.length
    },
  })
  const decoder = new TextDecoder()
  const start = performance.now()
  const cpu0 = cpuSeconds()
  for (const piece of pieces) {
    parser.feed(decode ? decoder.decode(piece, {stream: true}) : piece)
  }
  if (decode) parser.feed(decoder.decode())
  return {events, cpu: cpuSeconds() - cpu0, wall: (performance.now() - start) / 1000}
}


for (const chunk of chunks) {
  const byteChunks = []
  for (let i = 0; i < stream.length; i += chunk) byteChunks.push(stream.subarray(i, i + chunk))
  const td = new TextDecoder()
  const stringChunks = byteChunks.map((c) => td.decode(c, {stream: true}))
  for (const [impl, pieces, decode] of [
    ['eventsource-parser (Node, TextDecoder + feed)', byteChunks, true],
    ['eventsource-parser (Node, feed on pre-decoded strings)', stringChunks, false],
  ]) {
    const cpus = []
    const walls = []
    let events = 0
    for (let r = 0; r < runs + 1; r++) {
      const res = run(pieces, decode)
      if (r > 0) {
        cpus.push(res.cpu)
        walls.push(res.wall)
      }
      events = res.events
    }
    if (events !== n) {
      console.error(`peer: decoded ${events} events, want ${n}`)
      process.exit(1)
    }
    // The best run: on a shared machine noise only ever adds time.
    const cpu = Math.min(...cpus)
    console.log(
      JSON.stringify({
        impl,
        chunk,
        bytes: stream.length,
        events,
        runs,
        mb_per_s: stream.length / 1e6 / cpu,
        events_per_s: events / cpu,
        wall_mb_per_s: stream.length / 1e6 / Math.min(...walls),
      }),
    )
  }
}
