package sim

import (
	"embed"
	"sort"
	"strings"
)

//go:embed answers/*.md answers/*.txt
var files embed.FS

// Answer is one canned answer the simulated model can stream.
type Answer struct {
	Name     string
	Thinking string    // reasoning streamed before the text; may be empty
	Text     string    // the markdown answer
	Tool     *ToolCall // a function call streamed after the text; may be nil
	// Sources are the pages the answer draws on, and Cites where its text
	// cites them, for the dialects that carry citations (OpenAI
	// Responses, Anthropic, Gemini, the AI SDK).
	Sources []Source
	Cites   []Cite
}

// Source is a page a canned answer cites.
type Source struct{ URL, Title string }

// Cite says the passage of the answer's text ending at byte End cites
// Sources[Source] (0-based); the passage starts where the previous one
// ended.
type Cite struct{ Source, End int }

// ToolCall is a function call the simulated model makes.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON object
}

var answers = map[string]Answer{}

// rotation is the set a seed picks from when the request names no answer:
// the realistic everyday answers, not the stress corpora (xss, sample-100k).
// It is fixed: a seed keeps picking the same answer.
var rotation = []string{"short", "thinking", "tool-call", "sample-20k"}

func mustRead(name string) string {
	b, err := files.ReadFile("answers/" + name)
	if err != nil {
		panic("sim: embedded answer missing: " + name) // embedded above
	}
	return string(b)
}

func init() {
	for _, n := range []string{"short", "code", "table", "sample-20k", "sample-100k", "xss"} {
		answers[n] = Answer{Name: n, Text: mustRead(n + ".md")}
	}
	answers["thinking"] = Answer{
		Name:     "thinking",
		Thinking: strings.TrimSpace(mustRead("thinking.reasoning.txt")),
		Text:     mustRead("thinking.md"),
	}
	research := mustRead("research.md")
	first := strings.Index(research, "bitter.") + len("bitter.")
	answers["research"] = Answer{
		Name: "research",
		Text: research,
		Sources: []Source{
			{URL: "https://tea.example.org/brewing-green-tea", Title: "Brewing green tea"},
			{URL: "https://journal.example.com/catechins", Title: "Catechins and bitterness"},
			{URL: "https://tea.example.org/gyokuro", Title: "Gyokuro, the shaded tea"},
		},
		Cites: []Cite{
			{Source: 0, End: strings.Index(research, " Boiling")},
			{Source: 1, End: first},
			{Source: 2, End: strings.LastIndex(research, ".") + 1},
		},
	}
	answers["tool-call"] = Answer{
		Name: "tool-call",
		Text: mustRead("tool-call.md"),
		Tool: &ToolCall{
			ID:        "call_trickle_weather_0",
			Name:      "get_weather",
			Arguments: `{"location": "Lyon, France", "unit": "celsius", "include_forecast": true}`,
		},
	}
}

// Names lists the canned answers, sorted.
func Names() []string {
	out := make([]string, 0, len(answers))
	for n := range answers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the canned answer with that name.
func Lookup(name string) (Answer, bool) {
	a, ok := answers[name]
	return a, ok
}

// Pick returns the answer a seed selects when the request names none.
func Pick(seed uint64) Answer {
	return answers[rotation[seed%uint64(len(rotation))]]
}

// toolResultAnswer is the answer after a tool ran: what it returned,
// quoted, so that a test sees the result reached the model.
func toolResultAnswer(r ToolResult) Answer {
	name := r.Name
	if name == "" {
		name = "the tool"
	} else {
		name = "`" + name + "`"
	}
	content := strings.TrimSpace(r.Content)
	if content == "" {
		content = "(nothing)"
	}
	return Answer{Name: "tool-result", Text: "Here is what " + name + " returned:\n\n```json\n" + content + "\n```\n\nThat is the result of the call.\n"}
}
