package sim

import (
	"regexp"
	"strings"
)

// A prompt's kind, recognised by words a person would use. Each list is a
// whole-word, case-insensitive match on the last user message.
var (
	// askLong: only a prompt that asks for a long answer gets the 20 KB
	// sample (it takes minutes at default timing).
	askLong = regexp.MustCompile(`(?i)\b(essays?|in[- ]depth|in detail|detailed|thorough(ly)?|long (answer|article|explanation|read|text|post|essay)|write (a lot|at length)|at length|everything (about|on))\b`)
	// askWeather: a request a model would answer with a tool call.
	askWeather = regexp.MustCompile(`(?i)\b(weather|forecast|temperatures?|rain(ing|y)?|snow(ing|y)?|sunny|umbrella)\b`)
	// askCompare: a comparison, answered with a table.
	askCompare = regexp.MustCompile(`(?i)(\b(vs\.?|versus|compare[sd]?|comparing|comparison|differences?|differ|pros and cons|trade-?offs?)\b|\bwhich (is|one is) (better|faster|best)\b)`)
	// askThink: a question that wants reasoning, answered with thinking first.
	askThink = regexp.MustCompile(`(?i)\b(why|think|thinking|reason(ing)?)\b`)
	// askSources: a question that asks for sources, answered with the
	// research answer and its citations.
	askSources = regexp.MustCompile(`(?i)\b(sources?|cite|citations?|references?|research)\b`)
	// askCode: a programming question.
	askCode = regexp.MustCompile(`(?i)(\b(code|coding|function|func|method|class|program(ming)?|script|snippet|implement(ation)?|compile[rs]?|debug|bug|regex(p)?|algorithm|loop|array|slice|string|integer|struct|variable|library|package|api|sql|json|http|goroutines?|golang|python|javascript|typescript|rust|java|kotlin|swift|ruby|php|bash|shell|haskell)\b|\bin go\b|\bc\+\+|\bc#|\bgo (code|program|function)\b)`)
)

// Choose names the canned answer that fits a prompt, for a request that
// names none and has no seed: the 20 KB sample when the prompt asks for a
// long answer, the tool call for a weather-like request, the table for a
// comparison, the research answer (with its sources) for a prompt that
// asks for sources, the thinking answer for "why" or "think", code for a code
// question, and otherwise the short answer.
func Choose(prompt string) string {
	p := strings.TrimSpace(prompt)
	switch {
	case askLong.MatchString(p):
		return "sample-20k"
	case askWeather.MatchString(p):
		return "tool-call"
	case askCompare.MatchString(p):
		return "table"
	case askSources.MatchString(p):
		return "research"
	case askThink.MatchString(p):
		return "thinking"
	case askCode.MatchString(p):
		return "code"
	}
	return "short"
}
