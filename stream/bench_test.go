package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchStream builds about size bytes of a dialect's stream of ~4-byte
// text deltas, the shape of a real answer, and returns it with its event
// count.
func benchStream(dialect string, size int) ([]byte, int) {
	var b bytes.Buffer
	words := []string{"The ", "quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".\n\n"}
	n := 0
	for i := 0; b.Len() < size; i++ {
		tok, _ := json.Marshal(words[i%len(words)])
		switch dialect {
		case "openai":
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1741569952,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", tok)
		case "anthropic":
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n", tok)
		case "ollama":
			fmt.Fprintf(&b, "{\"model\":\"llama3.2\",\"created_at\":\"2025-06-02T14:31:02.114806Z\",\"message\":{\"role\":\"assistant\",\"content\":%s},\"done\":false}\n", tok)
		}
		n++
	}
	switch dialect {
	case "openai":
		b.WriteString("data: [DONE]\n\n")
	case "anthropic":
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	case "ollama":
		b.WriteString(`{"message":{"role":"assistant","content":""},"done":true}` + "\n")
	}
	return b.Bytes(), n + 1
}

// BenchmarkPipeline measures the whole byte-to-answer path (SSE or NDJSON
// framing, detection, JSON decoding, accumulation) per dialect and chunk
// size.
func BenchmarkPipeline(b *testing.B) {
	for _, dialect := range []string{"openai", "anthropic", "ollama"} {
		data, events := benchStream(dialect, 4<<20)
		for _, chunk := range []int{1 << 10, 16 << 10} {
			b.Run(fmt.Sprintf("%s/chunk=%dKiB", dialect, chunk>>10), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					p := newPipeline(b)
					for off := 0; off < len(data); off += chunk {
						p.Write(data[off:min(off+chunk, len(data))])
					}
					if p.Close() != nil || p.Answer().Status() != Complete {
						b.Fatal("the benchmark stream did not complete")
					}
				}
				b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// chunkReader hands out at most n bytes per Read, like a network body.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[k:]
	return k, nil
}

// BenchmarkNaiveOpenAI is the peer: what most applications write, a
// bufio.Scanner over lines and encoding/json into a map. It runs in the same
// benchmark binary as BenchmarkPipeline/openai for a side-by-side ratio (and
// it has the 64 KiB line limit and none of the status handling).
func BenchmarkNaiveOpenAI(b *testing.B) {
	data, events := benchStream("openai", 4<<20)
	for _, chunk := range []int{1 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("chunk=%dKiB", chunk>>10), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var text strings.Builder
				sc := bufio.NewScanner(&chunkReader{data: data, n: chunk})
				done := false
				for sc.Scan() {
					line, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok {
						continue
					}
					if line == "[DONE]" {
						done = true
						break
					}
					var m map[string]any
					if json.Unmarshal([]byte(line), &m) != nil {
						continue
					}
					if ch, ok := m["choices"].([]any); ok && len(ch) > 0 {
						if d, ok := ch[0].(map[string]any)["delta"].(map[string]any); ok {
							if s, ok := d["content"].(string); ok {
								text.WriteString(s)
							}
						}
					}
				}
				if !done {
					b.Fatal("no [DONE]")
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
