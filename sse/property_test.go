package sse

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// referenceParse is "Interpreting an event stream" transcribed as plainly as
// possible, on the whole stream at once: decode, strip one BOM, split lines,
// process each line. It shares no code with Parser (its UTF-8 decoder is
// referenceDecode) and is the oracle for the incremental one. It reports
// the same outcome format as parseCut; an unfinished event at the end (a
// field line since the last blank line, or an unterminated line that is not
// a comment) is "incomplete".
func referenceParse(input []byte) outcome {
	text := strings.TrimPrefix(string(referenceDecode(input)), "\uFEFF")
	var (
		o                        outcome
		data, typ, idBuf, lastID string
		pending                  bool
	)
	rec := recorder{&o.Log}
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			break
		}
		line := text[:i]
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]

		if line == "" {
			lastID = idBuf
			pending = false
			if data == "" {
				typ = ""
				continue
			}
			e := Event{Type: "message", Data: strings.TrimSuffix(data, "\n"), LastEventID: lastID}
			if typ != "" {
				e.Type = typ
			}
			data, typ = "", ""
			rec.Event(e)
			continue
		}
		if line[0] == ':' {
			continue
		}
		pending = true
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "event":
			typ = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.Contains(value, "\x00") {
				idBuf = value
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				ms, _ := new(big.Int).SetString(value, 10)
				if ms.Cmp(big.NewInt(maxRetryMs)) > 0 {
					ms.SetInt64(maxRetryMs)
				}
				rec.Retry(int(ms.Int64()))
			}
		}
	}
	if pending || (text != "" && text[0] != ':') {
		o.Close = "incomplete"
	}
	o.LastID = lastID
	return o
}

// The reference agrees with the conformance table, so it is a fair oracle.
func TestReferenceParserAgreesWithTheConformanceTable(t *testing.T) {
	for _, tc := range conformance {
		got := referenceParse([]byte(tc.input))
		if want := parseCut(t, tc.input, nil); !sameOutcome(got, want) {
			t.Fatalf("%s: reference %+v, parser %+v", tc.name, got, want)
		}
	}
}

// Tokens that make up hostile random streams: field names, their near
// misses, every line end, BOMs, split and invalid UTF-8, NUL, digits.
var streamTokens = []string{
	"data", "data", "data:", "data: ", "event:", "event: ", "id:", "id: ", "retry:", "retry: ",
	"Data:", "dat", ":", " ", "  ", "x", "yz", "0", "42", "\x00",
	"\n", "\n", "\n\n", "\r", "\r\n", "\r\r", "\n\r",
	"\uFEFF", "\xEF\xBB", "\xBF", "\xE2\x82", "\xAC", "€", "😀", "\xF0\x9F", "\xFF", "\xC0",
}

func randomStream(r *rand.Rand, tokens int) []byte {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("\uFEFF")
	}
	for range tokens {
		b.WriteString(streamTokens[r.IntN(len(streamTokens))])
	}
	return []byte(b.String())
}

func randomCuts(r *rand.Rand, n int) []int {
	var cuts []int
	for i := 0; i < n; {
		i += 1 + r.IntN(9)
		if i < n {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// Random hostile streams, each parsed whole, in random pieces and byte by
// byte, agree with the reference transcription of the standard.
func TestRandomStreamsMatchTheReferenceInAnyCut(t *testing.T) {
	runs := 3000
	if testing.Short() {
		runs = 300
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range runs {
		input := randomStream(r, 1+r.IntN(60))
		checkAgainstReference(t, input, randomCuts(r, len(input)))
	}
}

func checkAgainstReference(t *testing.T, input []byte, cuts []int) {
	t.Helper()
	want := referenceParse(input)
	s := string(input)
	equal := func(how string, got outcome) {
		t.Helper()
		if !sameOutcome(got, want) {
			t.Fatalf("%s: input %q\n got %+v\nwant %+v", how, input, got, want)
		}
	}
	equal("whole", parseCut(t, s, nil))
	equal(fmt.Sprintf("cut at %v", cuts), parseCut(t, s, cuts))
	bytewise := make([]int, 0, len(s))
	for i := 1; i < len(s); i++ {
		bytewise = append(bytewise, i)
	}
	equal("byte by byte", parseCut(t, s, bytewise))
}

// FuzzCutInvariance: any input, cut anywhere, gives the reference outcome
// whole, cut at two fuzzed offsets, in seeded random pieces and byte by
// byte; the pull Decoder agrees; and under a small fuzzed size bound the
// outcome is the same whole, at the two offsets and byte by byte.
func FuzzCutInvariance(f *testing.F) {
	for _, tc := range conformance {
		f.Add([]byte(tc.input), uint16(len(tc.input)/2), uint16(len(tc.input)/3), uint64(len(tc.name)))
	}
	f.Fuzz(func(t *testing.T, input []byte, c1, c2 uint16, seed uint64) {
		if len(input) > 4096 {
			return
		}
		n := len(input)
		a, b := int(c1)%(n+1), int(c2)%(n+1)
		if a > b {
			a, b = b, a
		}
		want := referenceParse(input)
		got := parseCut(t, string(input), []int{a, b})
		if !sameOutcome(got, want) {
			t.Fatalf("cut at %d,%d: input %q\n got %+v\nwant %+v", a, b, input, got, want)
		}
		r := rand.New(rand.NewPCG(seed, 7))
		checkAgainstReference(t, input, randomCuts(r, n))
		if dec := decodeAll(t, strings.NewReader(string(input))); !sameOutcome(dec, pullView(want)) {
			t.Fatalf("decoder: input %q\n got %+v\nwant %+v", input, dec, pullView(want))
		}
		// With a small size bound there is no oracle, but the outcome must
		// still not depend on the cut.
		bound := WithMaxEventSize(1 + int(seed%48))
		bounded := parseCut(t, string(input), nil, bound)
		bytewise := make([]int, 0, n)
		for i := 1; i < n; i++ {
			bytewise = append(bytewise, i)
		}
		for _, cuts := range [][]int{{a, b}, bytewise} {
			if got := parseCut(t, string(input), cuts, bound); !sameOutcome(got, bounded) {
				t.Fatalf("bound %d, cut at %v: input %q\n got %+v\nwant %+v", 1+seed%48, cuts, input, got, bounded)
			}
		}
	})
}

func sameOutcome(a, b outcome) bool {
	if len(a.Log) != len(b.Log) || a.Close != b.Close || a.LastID != b.LastID {
		return false
	}
	for i := range a.Log {
		if a.Log[i] != b.Log[i] {
			return false
		}
	}
	return true
}

// Under a small size bound the outcome, including where each oversize event
// is reported among the others, is still the same for every cut; and the
// events that are dispatched are exactly the reference's events less the
// dropped ones, in order.
func TestRandomStreamsAreCutInvariantUnderASmallBound(t *testing.T) {
	runs := 2000
	if testing.Short() {
		runs = 200
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range runs {
		input := randomStream(r, 1+r.IntN(80))
		s := string(input)
		whole := parseCut(t, s, nil, WithMaxEventSize(12))
		bytewise := make([]int, 0, len(s))
		for i := 1; i < len(s); i++ {
			bytewise = append(bytewise, i)
		}
		for _, cuts := range [][]int{bytewise, randomCuts(r, len(s))} {
			if got := parseCut(t, s, cuts, WithMaxEventSize(12)); !sameOutcome(got, whole) {
				t.Fatalf("input %q cut at %v:\n got %+v\nwant %+v", input, cuts, got, whole)
			}
		}
		// Every event that got through is one the reference dispatches,
		// in the same order (type and data: a dropped block's id line may
		// be what overflowed, so ids can differ).
		ref := referenceParse(input)
		typeAndData := func(l string) string {
			var typ, data, id string
			if _, err := fmt.Sscanf(l, "event %q %q %q", &typ, &data, &id); err != nil {
				t.Fatalf("log line %s: %v", l, err)
			}
			return typ + "\x00" + data
		}
		j := 0
		for _, l := range whole.Log {
			if !strings.HasPrefix(l, "event ") {
				continue
			}
			for j < len(ref.Log) && (!strings.HasPrefix(ref.Log[j], "event ") || typeAndData(ref.Log[j]) != typeAndData(l)) {
				j++
			}
			if j == len(ref.Log) {
				t.Fatalf("input %q: bounded parser dispatched %s, which the reference does not (in that order): %+v", input, l, ref.Log)
			}
			j++
		}
	}
}
