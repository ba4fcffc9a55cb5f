package stream

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// snapshot is everything observable about one run of the pipeline.
type snapshot struct {
	Dialect                                     Dialect
	Status, Text, Thinking, Finish, Err, LastID string
	Tools                                       []ToolCall
	Sources                                     []Source
	Citations                                   []Citation
	Files                                       []File
	Approvals                                   []Approval
	Usage                                       *Usage
	Skipped                                     int
	Problems                                    []string
	Events                                      []Event
}

// run feeds data to a fresh pipeline cut at the given offsets (ascending),
// closes it and records the outcome.
func run(t testing.TB, data []byte, cuts []int, opts ...Option) snapshot {
	t.Helper()
	var evs []Event
	opts = append([]Option{WithEventHandler(func(e Event) { evs = append(evs, e) })}, opts...)
	p := newPipeline(t, opts...)
	prev := 0
	for _, c := range append(cuts, len(data)) {
		n, err := p.Write(data[prev:c])
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		if n != c-prev {
			t.Fatalf("Write consumed %d of %d bytes", n, c-prev)
		}
		prev = c
	}
	_ = p.Close()
	a := p.Answer()
	if p.Dialect() == DialectText {
		evs = joinTexts(evs)
	}
	s := snapshot{
		Dialect: p.Dialect(), Status: a.Status().String(), Text: a.Text(), Thinking: a.Thinking(),
		Finish: a.FinishReason(), LastID: p.LastEventID(), Tools: a.ToolCalls(), Usage: a.Usage(),
		Sources: a.Sources(), Citations: a.Citations(), Files: a.Files(), Approvals: a.Approvals(),
		Skipped: a.Skipped(), Events: evs,
	}
	if a.Err() != nil {
		s.Err = a.Err().Error()
	}
	for _, e := range a.Problems() {
		s.Problems = append(s.Problems, e.Error())
	}
	return s
}

// joinTexts merges adjacent text events: a text body has no events of its
// own, so its text arrives in pieces cut where the chunks were; the text
// is what must not depend on the cut.
func joinTexts(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if n := len(out); n > 0 && e.Kind == KindText && out[n-1].Kind == KindText {
			out[n-1].Text += e.Text
			continue
		}
		out = append(out, e)
	}
	return out
}

// recordingOptions are the options a recording is read with: a .txt one
// comes with its content type and its length, as a server that knows it
// sends them (so that a prefix of it is a cut body, not a shorter answer).
func recordingOptions(file string, data []byte) []Option {
	if strings.HasSuffix(file, ".txt") {
		return []Option{WithResponse(Response{ContentType: "text/plain; charset=utf-8", ContentLength: int64(len(data))})}
	}
	return nil
}

func readRecording(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

type recording struct {
	file      string
	dialect   Dialect
	status    Status
	text      string
	thinking  string
	tools     []ToolCall
	sources   []Source
	citations []Citation
	files     []File
	approvals []Approval
	usage     *Usage
	finish    string
	errIs     error
	errType   string // ProviderError.Type
	skipped   int
	lastID    string
}

var recordings = []recording{
	{
		file: "openai-text.sse", dialect: "openai", status: Complete, finish: "stop",
		text:  "# Tea time\n\nGreen tea isn’t bitter when brewed at **80 °C** for two minutes. Steps:\n\n1. Warm the pot.\n2. Add leaves 🍵.\n3. Pour.",
		usage: &Usage{InputTokens: 19, OutputTokens: 41, TotalTokens: 60},
	},
	{
		file: "openai-tools.sse", dialect: "openai", status: Complete, finish: "tool_calls",
		tools: []ToolCall{
			{Index: 0, ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather", Arguments: `{"location":"Paris, France"}`, Partial: `{"location":"Paris, France"}`, Complete: true},
			{Index: 1, ID: "call_ABPCmEAzLB5QjS6gHDnrnzxp", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`, Partial: `{"tz":"Europe/Paris"}`, Complete: true},
		},
		usage: &Usage{InputTokens: 82, OutputTokens: 47, TotalTokens: 129},
	},
	{
		file: "openai-error.sse", dialect: "openai", status: Failed, text: "The answer is partly here",
		errIs: ErrProvider, errType: "server_error",
	},
	{
		file: "openai-truncated.sse", dialect: "openai", status: Incomplete, text: "Cut off mid",
		errIs: ErrIncomplete,
	},
	{
		file: "openai-reasoning-crlf.sse", dialect: "openai", status: Complete, finish: "stop",
		thinking: "The user asks 2+2. Easy.", text: "2 + 2 = **4**.",
		usage: &Usage{InputTokens: 12, OutputTokens: 20, ReasoningTokens: 11, TotalTokens: 32},
	},
	{
		file: "openai-bad-input.sse", dialect: "openai", status: Complete, finish: "stop",
		text: "Still here, intact.", skipped: 3,
	},
	{
		file: "responses-reasoning.sse", dialect: "responses", status: Complete, finish: "completed",
		thinking: "**Recalling facts**\n\nThe user wants the boiling point.\n\nAnswer in Celsius.",
		text:     "Water boils at **100 °C** at sea level—lower on a mountain.",
		usage:    &Usage{InputTokens: 37, OutputTokens: 88, ReasoningTokens: 64, TotalTokens: 125},
	},
	{
		file: "responses-tool.sse", dialect: "responses", status: Complete, finish: "completed",
		tools: []ToolCall{{Index: 0, ID: "call_12345xyz", Name: "get_weather", Arguments: `{"location":"Bogotá, Colombia"}`, Partial: `{"location":"Bogotá, Colombia"}`, Complete: true}},
		usage: &Usage{InputTokens: 291, OutputTokens: 23, TotalTokens: 314},
	},
	{
		file: "responses-incomplete.sse", dialect: "responses", status: Complete, finish: "max_output_tokens",
		text: "Once upon a time, a very long", usage: &Usage{InputTokens: 9, OutputTokens: 16, TotalTokens: 25},
	},
	{
		file: "responses-failed.sse", dialect: "responses", status: Failed, text: "Partial answer",
		errIs: ErrProvider, errType: "server_error",
	},
	{
		file: "responses-error.sse", dialect: "responses", status: Failed,
		errIs: ErrProvider, errType: "rate_limit_exceeded",
	},
	{
		file: "anthropic-thinking-tool.sse", dialect: "anthropic", status: Complete, finish: "tool_use",
		thinking: "I need to find the weather in Paris; the tool can tell me.",
		text:     "Let me check the weather in *Paris* for you.",
		tools: []ToolCall{{Index: 2, ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather",
			Arguments: `{"location": "Paris, France", "unit": "celsius"}`, Partial: `{"location": "Paris, France", "unit": "celsius"}`, Complete: true}},
		usage: &Usage{InputTokens: 472, OutputTokens: 89, TotalTokens: 561},
	},
	{
		file: "anthropic-text.sse", dialect: "anthropic", status: Complete, finish: "end_turn",
		text:  "Hello! Here is a list:\n\n- one\n- two\n\n```go\nfmt.Println(\"hi\")\n```\n",
		usage: &Usage{InputTokens: 25, OutputTokens: 15, TotalTokens: 40},
	},
	{
		file: "openai-citations.sse", dialect: "openai", status: Complete, finish: "stop",
		text: researchText, sources: researchSources, citations: researchCitations(),
		usage: &Usage{InputTokens: 21, OutputTokens: 58, TotalTokens: 79},
	},
	{
		file: "responses-citations.sse", dialect: "responses", status: Complete, finish: "completed",
		text: researchText, sources: researchSources, citations: researchCitations(),
		usage: &Usage{InputTokens: 8312, OutputTokens: 164, TotalTokens: 8476},
	},
	{
		file: "anthropic-citations.sse", dialect: "anthropic", status: Complete, finish: "end_turn",
		text: researchText, sources: researchSources,
		citations: researchCitations("Brew green tea at 70 to 80 °C for 2–3 minutes.",
			"Hotter water extracts more catechins, the compounds behind bitterness."),
		tools: []ToolCall{{Index: 0, ID: "srvtoolu_01QbT6sWm3Hk9Ve2Rx8Ny4Ja", Name: "web_search",
			Arguments: `{"query": "green tea brewing temperature bitterness"}`, Partial: `{"query": "green tea brewing temperature bitterness"}`, Complete: true}},
		usage: &Usage{InputTokens: 9120, OutputTokens: 187, TotalTokens: 9307},
	},
	{
		file: "gemini-citations.sse", dialect: "gemini", status: Complete, finish: "STOP",
		text: researchText, sources: researchSources,
		citations: researchCitations(researchFirst, researchText[len(researchFirst)+1:]),
		usage:     &Usage{InputTokens: 14, OutputTokens: 41, TotalTokens: 123},
	},
	{
		file: "anthropic-web-search.sse", dialect: "anthropic", status: Complete, finish: "end_turn",
		text:      "It is sunny in New York, about 24 °C.",
		sources:   []Source{{URL: "https://weather.example/nyc", Title: "Weather in New York City"}},
		citations: []Citation{{Source: 1, End: len("It is sunny in New York, about 24 °C."), Quote: "Sunny, 24 °C"}},
		tools: []ToolCall{{Index: 1, ID: "srvtoolu_014hJH82Qum7Td6UV8gDXThB", Name: "web_search",
			Arguments: `{"query": "weather NYC today"}`, Partial: `{"query": "weather NYC today"}`, Complete: true}},
		usage: &Usage{InputTokens: 10682, OutputTokens: 510, TotalTokens: 11192},
	},
	{
		file: "anthropic-overloaded.sse", dialect: "anthropic", status: Failed, text: "The first half of the answer",
		usage: &Usage{InputTokens: 25, OutputTokens: 1, TotalTokens: 26},
		errIs: ErrProvider, errType: "overloaded_error",
	},
	{
		file: "gemini-thinking-crlf.sse", dialect: "gemini", status: Complete, finish: "STOP",
		thinking: "**Considering the sky**\n\nRayleigh scattering explains it.",
		text:     "The sky looks blue because air molecules scatter short (blue) wavelengths more than long ones — “Rayleigh scattering”.",
		usage:    &Usage{InputTokens: 9, OutputTokens: 28, ReasoningTokens: 51, TotalTokens: 88},
	},
	{
		file: "gemini-tool.sse", dialect: "gemini", status: Complete, finish: "STOP",
		tools: []ToolCall{{Index: 0, Name: "schedule_meeting",
			Arguments: `{"attendees":["Bob","Alice"],"date":"2025-03-27","time":"10:00","topic":"Q3 planning"}`,
			Partial:   `{"attendees":["Bob","Alice"],"date":"2025-03-27","time":"10:00","topic":"Q3 planning"}`, Complete: true}},
		usage: &Usage{InputTokens: 120, OutputTokens: 30, TotalTokens: 150},
	},
	{
		file: "gemini-truncated.sse", dialect: "gemini", status: Incomplete, text: "Gemini was cut before",
		errIs: ErrIncomplete,
	},
	{
		file: "gemini-error.sse", dialect: "gemini", status: Failed, text: "Partial",
		errIs: ErrProvider, errType: "UNAVAILABLE",
	},
	{
		file: "ollama-thinking.ndjson", dialect: "ollama", status: Complete, finish: "stop",
		thinking: "Okay, the user greets me.", text: "Hello! How can I help? 😊",
		usage: &Usage{InputTokens: 26, OutputTokens: 282, TotalTokens: 308},
	},
	{
		file: "ollama-tools.ndjson", dialect: "ollama", status: Complete, finish: "stop",
		tools: []ToolCall{
			{Index: 0, Name: "get_current_weather", Arguments: `{"format":"celsius","location":"Paris, FR"}`, Partial: `{"format":"celsius","location":"Paris, FR"}`, Complete: true},
			{Index: 1, Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`, Partial: `{"tz":"Europe/Paris"}`, Complete: true},
		},
		usage: &Usage{InputTokens: 207, OutputTokens: 35, TotalTokens: 242},
	},
	{
		file: "ollama-truncated.ndjson", dialect: "ollama", status: Incomplete, text: "The stream stops",
		errIs: ErrIncomplete, skipped: 1,
	},
	{
		file: "ollama-error.ndjson", dialect: "ollama", status: Failed, text: "Partly",
		errIs: ErrProvider, errType: "error",
	},
	{
		file: "plain.sse", dialect: "plain", status: Complete, text: "Plain text, no frills.",
	},
	{
		file: "ai-sdk-markdown.sse", dialect: "ai-sdk", status: Complete, finish: "stop", text: aisdkMarkdown,
	},
	{
		file: "text-ai-sdk.txt", dialect: "text", status: Complete, text: aisdkMarkdown,
	},
	{
		file: "ai-sdk-reasoning-tool.sse", dialect: "ai-sdk", status: Complete, finish: "tool-calls",
		thinking: "The user asks about Paris. The weather tool can tell.",
		text:     "Let me check the weather in *Paris*.",
		tools: []ToolCall{{Index: 0, ID: "call_paris_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Partial: `{"city":"Paris"}`,
			Complete: true, Output: `{"city":"Paris","temperature":21,"sky":"clear"}`}},
	},
	{
		file: "ai-sdk-sources.sse", dialect: "ai-sdk", status: Complete, finish: "stop",
		text: "Green tea is best at **80 °C** [1], as the guide says [2].",
		sources: []Source{
			{ID: "src_1", URL: "https://example.com/green-tea", Title: "Brewing green tea"},
			{ID: "src_2", Title: "The tea guide", MediaType: "application/pdf", Filename: "tea-guide.pdf"},
		},
		files: []File{{URL: "data:image/png;base64,iVBORw0KGgo=", MediaType: "image/png"}},
	},
	{
		file: "ai-sdk7-approval.sse", dialect: "ai-sdk", status: Complete, finish: "tool-calls",
		text: "I can book that for you.",
		tools: []ToolCall{{Index: 0, ID: "call_book_1", Name: "book_table", Arguments: `{"restaurant":"Chez Nous","people":2}`,
			Partial: `{"restaurant":"Chez Nous","people":2}`, Complete: true}},
		approvals: []Approval{{ID: "approval_1", ToolCallID: "call_book_1", Reason: ApprovalToolCall}},
	},
	{
		file: "ai-sdk7-sources.sse", dialect: "ai-sdk", status: Complete, finish: "stop",
		text: "Green tea is best at **80 °C** [1].",
		sources: []Source{
			{ID: "src_1", URL: "https://example.com/green-tea", Title: "Brewing green tea"},
			{ID: "src_2", Title: "The tea guide", MediaType: "application/pdf", Filename: "tea-guide.pdf"},
		},
		// endIndex 30 counts UTF-16 code units: "°" is one, two bytes.
		citations: []Citation{{Source: 1, End: 31, Quote: "Green tea is best at **80 °C**"}, {Source: 2, End: 9}},
	},
	{
		file: "ai-sdk-error.sse", dialect: "ai-sdk", status: Failed, text: "The first half of the answer, then",
		errIs: ErrProvider, errType: "error",
	},
	{
		file: "ai-sdk-abort.sse", dialect: "ai-sdk", status: Stopped, text: "Stopped mid", errIs: ErrAborted,
	},
	{
		file: "ag-ui-tool.sse", dialect: "ag-ui", status: Complete, finish: "success",
		thinking: "The reader asks about Paris. The weather tool can tell.",
		text:     "## Paris\n\nLet me check the weather in *Paris* 🌦️ — one moment.\n\nIt is **21 °C** and clear.\n\n| city | sky |\n| --- | --- |\n| Paris | clear |\n",
		tools: []ToolCall{{Index: 0, ID: "call_paris_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Partial: `{"city":"Paris"}`,
			Complete: true, Output: `{"city":"Paris","temperature":21,"sky":"clear"}`}},
		usage: &Usage{InputTokens: 150, OutputTokens: 80, ReasoningTokens: 20, TotalTokens: 230},
	},
	{
		file: "ag-ui-chunks.sse", dialect: "ag-ui", status: Complete,
		thinking: "Short and sweet.", text: "Brewing green tea: **80 °C**, two minutes.",
		tools: []ToolCall{{Index: 0, ID: "call_timer", Name: "set_timer", Arguments: `{"minutes":2}`, Partial: `{"minutes":2}`, Complete: true}},
	},
	{
		file: "ag-ui-cancelled.sse", dialect: "ag-ui", status: Stopped, finish: "cancelled",
		text: "Stopped mid sentence", errIs: ErrAborted,
	},
	{
		file: "ag-ui-interrupt.sse", dialect: "ag-ui", status: Complete, finish: "interrupt", text: "I can book it. ",
		tools: []ToolCall{{Index: 0, ID: "call_book_1", Name: "book_table", Arguments: `{"restaurant":"Chez Nous","people":2}`,
			Partial: `{"restaurant":"Chez Nous","people":2}`, Complete: true}},
		approvals: []Approval{{ID: "int_1", ToolCallID: "call_book_1", Reason: "tool_approval", Message: "Book a table for 2 at Chez Nous?"}},
		usage:     &Usage{InputTokens: 120, OutputTokens: 64, ReasoningTokens: 20, TotalTokens: 184},
	},
	{
		file: "ag-ui-error.sse", dialect: "ag-ui", status: Failed, text: "The first half of the answer, then",
		errIs: ErrProvider, errType: "overloaded", usage: &Usage{InputTokens: 30, OutputTokens: 16, TotalTokens: 46},
	},
	{
		file: "text-markdown.txt", dialect: "text", status: Complete,
		text: "## Green tea\n\nBrew it at **80 °C** — never boiling 🍵.\n\n- 2 g a cup\n- 2 minutes, 日本茶 too\n",
	},
	{
		file: "relay-stopped.sse", dialect: "openai", status: Stopped, text: "Stopped midway",
		errIs: ErrStopped, lastID: "s1:4",
	},
	{
		file: "relay-gone.sse", dialect: "auto", status: Failed, errIs: ErrGone, lastID: "s2:7",
	},
}

// The research answer the citation recordings of four APIs give (openai-,
// responses-, anthropic- and gemini-citations.sse): the same text, the
// same two sources, each cited at the end of its sentence. The dash and
// the degree sign are more than one byte, so offsets counted in
// characters (Responses), bytes (Gemini) or at block ends (Anthropic) all
// have to land on the same byte.
const (
	researchFirst = "Green tea tastes best brewed at 70–80 °C for two to three minutes."
	researchText  = researchFirst + " Boiling water draws out catechins, which make it bitter."
)

var researchSources = []Source{
	{URL: "https://tea.example.org/brewing-green-tea", Title: "Brewing green tea"},
	{URL: "https://journal.example.com/catechins", Title: "Catechins and bitterness"},
}

// researchCitations are the research answer's citations, with the quotes
// the provider gave (none, or one a source).
func researchCitations(quotes ...string) []Citation {
	cs := []Citation{{Source: 1, End: len(researchFirst)}, {Source: 2, End: len(researchText)}}
	for i, q := range quotes {
		cs[i].Quote = q
	}
	return cs
}

// aisdkMarkdown is the answer the AI SDK recordings (testdata/aisdk)
// stream, as a UI message stream and as text.
const aisdkMarkdown = "## Brewing green tea\n\nUse water at **80 °C** — never boiling 🍵.\n\n" +
	"1. Warm the pot.\n2. Add 2 g of leaves a cup (日本茶 too).\n3. Steep for *two* minutes.\n\n" +
	"| step | time |\n| --- | --- |\n| steep | 2 min |\n"

func TestRecordingsGiveTheExpectedAnswer(t *testing.T) {
	for _, rec := range recordings {
		t.Run(rec.file, func(t *testing.T) {
			data := readRecording(t, rec.file)
			p := newPipeline(t, recordingOptions(rec.file, data)...)
			_, err := p.Write(data)
			require.NoError(t, err)
			closeErr := p.Close()
			a := p.Answer()
			require.Equal(t, rec.dialect, p.Dialect(), "dialect")
			require.Equal(t, rec.status, a.Status(), "status (err: %v)", a.Err())
			require.Equal(t, rec.text, a.Text(), "text")
			require.Equal(t, rec.thinking, a.Thinking(), "thinking")
			require.Equal(t, rec.finish, a.FinishReason(), "finish reason")
			require.Equal(t, rec.usage, a.Usage(), "usage")
			require.Equal(t, rec.lastID, p.LastEventID(), "last event id")
			require.Equal(t, rec.skipped, a.Skipped(), "skipped (problems: %v)", a.Problems())
			require.Equal(t, rec.sources, a.Sources(), "sources")
			require.Equal(t, rec.citations, a.Citations(), "citations")
			require.Equal(t, rec.files, a.Files(), "files")
			require.Equal(t, rec.approvals, a.Approvals(), "approvals")
			if rec.tools == nil {
				require.Empty(t, a.ToolCalls())
			} else {
				require.Equal(t, rec.tools, a.ToolCalls())
			}
			if rec.errIs == nil {
				require.NoError(t, a.Err())
			} else {
				require.ErrorIs(t, a.Err(), rec.errIs)
			}
			if rec.errType != "" {
				var perr *ProviderError
				require.ErrorAs(t, a.Err(), &perr)
				require.Equal(t, rec.errType, perr.Type)
				require.Equal(t, rec.dialect, perr.Dialect)
				require.NotEmpty(t, perr.Message)
			}
			if rec.status == Incomplete {
				require.ErrorIs(t, closeErr, ErrIncomplete)
				require.Contains(t, closeErr.Error(), rec.dialect+" stream closed")
			} else {
				require.NoError(t, closeErr)
			}
		})
	}
}

// cutSets returns the chunkings every recording is fed in: every single
// split offset (every seventh one under -short, for js/wasm on Node), one
// byte at a time, and random cuts.
func cutSets(n int, short bool) [][]int {
	var sets [][]int
	step, random := 1, 20
	if short {
		step, random = 7, 5
	}
	for i := 1; i < n; i += step {
		sets = append(sets, []int{i})
	}
	bytewise := make([]int, 0, n)
	for i := 1; i < n; i++ {
		bytewise = append(bytewise, i)
	}
	sets = append(sets, bytewise)
	rng := rand.New(rand.NewSource(int64(n)))
	for k := 0; k < random; k++ {
		var cuts []int
		for at := rng.Intn(17) + 1; at < n; at += rng.Intn(17) + 1 {
			cuts = append(cuts, at)
		}
		sets = append(sets, cuts)
	}
	return sets
}

func TestRecordingsAreCutInvariant(t *testing.T) {
	for _, rec := range recordings {
		t.Run(rec.file, func(t *testing.T) {
			data := readRecording(t, rec.file)
			opts := recordingOptions(rec.file, data)
			whole := run(t, data, nil, opts...)
			require.NotEmpty(t, whole.Status)
			for _, cuts := range cutSets(len(data), testing.Short()) {
				got := run(t, data, cuts, opts...)
				if !snapshotsEqual(whole, got) {
					require.Equal(t, whole, got, "cut at %v", cuts)
				}
			}
		})
	}
}

// snapshotsEqual is a cheap first comparison; require.Equal gives the
// diff when it fails.
func snapshotsEqual(a, b snapshot) bool {
	return reflect.DeepEqual(a, b)
}

func TestEveryRecordingIsDetectedTheSameWithItsDialectGivenExplicitly(t *testing.T) {
	for _, rec := range recordings {
		if rec.dialect == "auto" {
			continue
		}
		t.Run(rec.file, func(t *testing.T) {
			data := readRecording(t, rec.file)
			auto := run(t, data, nil, recordingOptions(rec.file, data)...)
			explicit := run(t, data, nil, WithDialect(rec.dialect))
			require.Equal(t, auto, explicit)
		})
	}
}

func TestRecordingEndsAreMarkersNotCloses(t *testing.T) {
	// Every complete recording, cut anywhere before its end marker has been
	// dispatched, must not be complete: complete needs the marker.
	for _, rec := range recordings {
		if rec.status != Complete {
			continue
		}
		t.Run(rec.file, func(t *testing.T) {
			data := readRecording(t, rec.file)
			step := 1
			if testing.Short() {
				step = 7
			}
			var firstComplete = -1
			var lengths []int
			for n := 0; n < len(data); n += step {
				lengths = append(lengths, n)
			}
			for _, n := range append(lengths, len(data)) {
				s := run(t, data[:n], nil, recordingOptions(rec.file, data)...)
				if s.Status == "complete" && firstComplete < 0 {
					firstComplete = n
				}
				if firstComplete >= 0 {
					require.Equal(t, "complete", s.Status, "prefix of %d bytes after a complete prefix of %d", n, firstComplete)
				} else {
					require.Contains(t, []string{"incomplete"}, s.Status, "prefix of %d bytes", n)
					// Nothing is lost: a prefix's text is a prefix of the whole.
					require.True(t, len(s.Text) <= len(rec.text) && rec.text[:len(s.Text)] == s.Text, "text of prefix %d: %q", n, s.Text)
				}
			}
			require.GreaterOrEqual(t, firstComplete, 0)
		})
	}
}
