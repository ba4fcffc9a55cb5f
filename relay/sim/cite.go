package sim

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// streamedCites are the answer's citations whose passage was streamed
// whole (MaxTokens or a stop sequence may cut the text short).
func (g *Generator) streamedCites() []Cite {
	var out []Cite
	for _, c := range g.answer.Cites {
		if c.End <= len(g.streamed[phaseText-phaseThinking]) && c.Source >= 0 && c.Source < len(g.answer.Sources) {
			out = append(out, c)
		}
	}
	return out
}

// responsesAnnotations is the text part's url_citation annotations.
func responsesAnnotations(g *Generator) string {
	var parts []string
	for _, c := range g.streamedCites() {
		parts = append(parts, responsesAnnotation(g, c))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// responsesAnnotation is one cite as a url_citation, its indexes in
// characters (code points), as the Responses API counts them; the passage
// starts where the previous cite's ended.
func responsesAnnotation(g *Generator, c Cite) string {
	text := string(g.streamed[phaseText-phaseThinking])
	start := 0
	for _, o := range g.answer.Cites {
		if o.End < c.End {
			start = max(start, o.End)
		}
	}
	s := g.answer.Sources[c.Source]
	return `{"type":"url_citation","start_index":` + itoa(utf8.RuneCountInString(text[:start])) + `,"end_index":` + itoa(utf8.RuneCountInString(text[:c.End])) +
		`,"url":` + q(s.URL) + `,"title":` + q(s.Title) + `}`
}

// geminiGrounding is the groundingMetadata of the final chunk: the
// sources as web chunks and each cited passage as a support, by bytes.
func geminiGrounding(g *Generator) string {
	cites := g.streamedCites()
	if len(cites) == 0 {
		return ""
	}
	text := string(g.streamed[phaseText-phaseThinking])
	var chunks, supports []string
	for _, s := range g.answer.Sources {
		chunks = append(chunks, `{"web":{"uri":`+q(s.URL)+`,"title":`+q(s.Title)+`}}`)
	}
	start := 0
	for _, c := range cites {
		seg := strings.TrimLeft(text[start:c.End], " \n")
		from := c.End - len(seg)
		supports = append(supports, `{"segment":{"startIndex":`+itoa(from)+`,"endIndex":`+itoa(c.End)+`,"text":`+q(seg)+`},"groundingChunkIndices":[`+itoa(c.Source)+`]}`)
		start = c.End
	}
	return `,"groundingMetadata":{"groundingChunks":[` + strings.Join(chunks, ",") + `],"groundingSupports":[` + strings.Join(supports, ",") + `]}`
}

// aisdkCitations is ai@7's citations on text-end, their indexes in UTF-16
// code units (JavaScript's), as the SDK counts them.
func aisdkCitations(g *Generator) string {
	cites := g.streamedCites()
	if len(cites) == 0 {
		return ""
	}
	text := string(g.streamed[phaseText-phaseThinking])
	units := func(s string) int { return len(utf16.Encode([]rune(s))) }
	var parts []string
	start := 0
	for _, c := range cites {
		s := g.answer.Sources[c.Source]
		parts = append(parts, `{"source":{"type":"source","sourceType":"url","id":`+q("src_"+itoa(c.Source+1))+`,"url":`+q(s.URL)+`,"title":`+q(s.Title)+
			`},"startIndex":`+itoa(units(text[:start]))+`,"endIndex":`+itoa(units(text[:c.End]))+`}`)
		start = c.End
	}
	return `,"citations":[` + strings.Join(parts, ",") + `]`
}

// anthropicSearch is the web search the Anthropic dialect runs before an
// answer with sources: its server_tool_use block and its result, the
// sources as found, at blocks g.block and g.block+1.
func anthropicSearch(g *Generator) []Message {
	var a anthropic
	use, res := itoa(g.block), itoa(g.block+1)
	id := q("srvtoolu_" + g.p.ID)
	var results []string
	for _, s := range g.answer.Sources {
		results = append(results, `{"type":"web_search_result","title":`+q(s.Title)+`,"url":`+q(s.URL)+`,"encrypted_content":"c2ltdWxhdGVk","page_age":null}`)
	}
	g.block += 2
	return []Message{
		a.ev("content_block_start", `{"type":"content_block_start","index":`+use+`,"content_block":{"type":"server_tool_use","id":`+id+`,"name":"web_search","input":{}}}`),
		a.ev("content_block_delta", `{"type":"content_block_delta","index":`+use+`,"delta":{"type":"input_json_delta","partial_json":`+q(`{"query": "green tea brewing"}`)+`}}`),
		a.ev("content_block_stop", `{"type":"content_block_stop","index":`+use+`}`),
		a.ev("content_block_start", `{"type":"content_block_start","index":`+res+`,"content_block":{"type":"web_search_tool_result","tool_use_id":`+id+`,"content":[`+strings.Join(results, ",")+`]}}`),
		a.ev("content_block_stop", `{"type":"content_block_stop","index":`+res+`}`),
	}
}

// anthropicCitation is the citations_delta that opens the text block
// holding cite k's passage ("" past the last cite).
func anthropicCitation(g *Generator, k int) []Message {
	if k >= len(g.answer.Cites) {
		return nil
	}
	c := g.answer.Cites[k]
	if c.Source < 0 || c.Source >= len(g.answer.Sources) {
		return nil
	}
	s := g.answer.Sources[c.Source]
	start := 0
	if k > 0 {
		start = g.answer.Cites[k-1].End
	}
	quote := strings.TrimSpace(g.answer.Text[start:c.End])
	return []Message{anthropic{}.ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(g.block)+
		`,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":`+q(quote)+
		`,"url":`+q(s.URL)+`,"title":`+q(s.Title)+`,"encrypted_index":"c2ltdWxhdGVk"}}}`)}
}

// anthropicText is a text token in the Anthropic dialect of an answer that
// cites: as the API does, each cited passage is a text block of its own
// that opens with its citation, so a token that crosses a passage's end is
// split there and the next block begins.
func anthropicText(g *Generator, tok string) []Message {
	var a anthropic
	var out []Message
	streamed := len(g.streamed[phaseText-phaseThinking])
	at := streamed - len(tok) // where tok starts in the text
	for tok != "" {
		cut := len(tok)
		next := g.cite < len(g.answer.Cites)
		if next {
			if end := g.answer.Cites[g.cite].End; end > at && end < at+len(tok) {
				cut = end - at
			} else if end == at {
				cut = 0
			}
		}
		if cut > 0 {
			out = append(out, a.ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(g.block)+`,"delta":{"type":"text_delta","text":`+q(tok[:cut])+`}}`))
		}
		at += cut
		tok = tok[cut:]
		if next && g.answer.Cites[g.cite].End == at && (tok != "" || at < len(g.answer.Text)) {
			// The passage ends here: its block closes, the next opens.
			g.cite++
			out = append(out, a.ev("content_block_stop", `{"type":"content_block_stop","index":`+itoa(g.block)+`}`))
			g.block++
			out = append(out, a.ev("content_block_start", `{"type":"content_block_start","index":`+itoa(g.block)+`,"content_block":{"type":"text","text":""}}`))
			out = append(out, anthropicCitation(g, g.cite)...)
		}
	}
	return out
}

// openaiAnnotations is a search model's url_citation annotations on Chat
// Completions, their indexes in characters as on Responses.
func openaiAnnotations(g *Generator) string {
	var parts []string
	for _, c := range g.streamedCites() {
		// The same citation as Responses', nested under url_citation.
		a := responsesAnnotation(g, c)
		parts = append(parts, `{"type":"url_citation","url_citation":{`+strings.TrimPrefix(a, `{"type":"url_citation",`)+`}`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
