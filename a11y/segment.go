package a11y

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/sentences"

	"github.com/trickle-dev/trickle/internal/anyof"
	"github.com/trickle-dev/trickle/internal/stdlite"
)

// MaxUnitRunes is the longest unit spoken in one piece. A longer sentence is
// split at a clause boundary (";", ":", a dash, ",", then a space) so a
// screen reader never queues a paragraph-long utterance.
const MaxUnitRunes = 300

// minClauseRunes keeps a clause split from producing a tiny first piece.
const minClauseRunes = 80

// uaxEnds returns the ends of the sentences of text by the Unicode rules
// alone (UAX #29), without Trickle's layers. With atEOF false, only
// boundaries already decided by the text present are returned: the text
// after the last one may still grow into the same sentence.
func uaxEnds(text []byte, atEOF bool) []int {
	var ends []int
	for cur := 0; cur < len(text); {
		adv, _, err := sentences.SplitFunc(text[cur:], atEOF)
		if err != nil || adv <= 0 {
			break
		}
		cur += adv
		ends = append(ends, cur)
	}
	return ends
}

// sentenceEnds returns the confirmed sentence ends of a run's text: UAX #29
// boundaries, minus the ones Trickle's layers veto (abbreviations, URLs,
// code, prefixes), plus the ones it adds (a "…" before a capital), then cut
// to MaxUnitRunes. With atEOF false the text after the last end is not yet
// a sentence: it waits for more text, whatever the cut of the stream.
func sentenceEnds(text []byte, flags []uint8, atEOF bool) []int {
	var ends []int
	start, cur := 0, 0
	for cur < len(text) {
		adv, _, err := sentences.SplitFunc(text[cur:], atEOF)
		if err != nil || adv <= 0 {
			break
		}
		for _, e := range ellipsisEnds(text, flags, cur, cur+adv) {
			if e > start {
				ends = append(ends, e)
				start = e
			}
		}
		cur += adv
		if cur < len(text) && joins(text, flags, start, cur) {
			continue
		}
		ends = append(ends, cur)
		start = cur
	}
	if !atEOF {
		for _, e := range ellipsisEnds(text, flags, cur, len(text)) {
			if e > start {
				ends = append(ends, e)
				start = e
			}
		}
	}
	// Split what is too long, both confirmed sentences and a still-open
	// one already past the limit: the cut depends on the first
	// MaxUnitRunes runes only, so every chunking finds the same one.
	var out []int
	s := 0
	for _, e := range ends {
		for utf8.RuneCount(text[s:e]) > MaxUnitRunes {
			c := clauseCut(text, s)
			out = append(out, c)
			s = c
		}
		out = append(out, e)
		s = e
	}
	if !atEOF {
		for utf8.RuneCount(text[s:]) > MaxUnitRunes {
			// Cut an open sentence only when no boundary can still appear
			// within the limit: pretending the text ends here resolves
			// every pending look-ahead (SB8) as a break, so a first token
			// longer than the limit means the sentence is.
			adv, _, _ := sentences.SplitFunc(text[s:], true)
			if utf8.RuneCount(text[s:s+adv]) <= MaxUnitRunes {
				break
			}
			c := clauseCut(text, s)
			out = append(out, c)
			s = c
		}
	}
	return out
}

// clauseCut returns where to end a piece of the over-long sentence starting
// at s: after the last clause mark within MaxUnitRunes runes, preferring
// stronger marks, never in the first minClauseRunes runes.
func clauseCut(text []byte, s int) int {
	w, lo, n := s, s, 0
	for w < len(text) && n < MaxUnitRunes {
		_, size := utf8.DecodeRune(text[w:])
		w += size
		n++
		if n == minClauseRunes {
			lo = w
		}
	}
	window := text[lo:w]
	for _, mark := range []string{"; ", ": ", "— ", "– ", ", "} {
		if i := stdlite.LastIndex(window, mark); i >= 0 {
			return lo + i + len(mark) - 1
		}
	}
	if i := bytes.LastIndexByte(window, ' '); i >= 0 {
		return lo + i
	}
	return w
}

// ellipsisEnds finds sentence ends UAX #29 does not give: U+2026 "…" is not
// a sentence terminator in Unicode, but "It failed… Then I retried." is two
// sentences. A "…" ends one when spaces and then an uppercase letter follow.
func ellipsisEnds(text []byte, flags []uint8, from, to int) []int {
	var ends []int
	const ell = "…"
	for i := from; i < to; {
		j := bytes.Index(text[i:to], []byte(ell))
		if j < 0 {
			break
		}
		e := i + j + len(ell)
		k := e
		for k < to && text[k] == ' ' {
			k++
		}
		if k > e && k < to && flags[e-1]&flagKeep == 0 {
			if r, _ := utf8.DecodeRune(text[k:]); unicode.IsUpper(r) {
				ends = append(ends, k)
			}
		}
		i = e
	}
	return ends
}

// Abbreviations that do not end a sentence. The list is short on purpose:
// ICU's long list merges real sentences ("Click OK. Then…", "Written in Go.
// It…"), which is worse for a listener than a rare early pause.
var (
	// titles and references are always followed by what they introduce.
	titles = map[string]bool{
		"Mr.": true, "Mrs.": true, "Ms.": true, "Dr.": true, "Prof.": true,
		"St.": true, "Fig.": true, "Figs.": true, "Sr.": true, "Jr.": true,
		"e.g.": true, "E.g.": true, "i.e.": true, "I.e.": true, "vs.": true,
		"Vs.": true, "cf.": true, "Cf.": true,
	}
	// beforeNumber abbreviations do not end a sentence when a digit follows
	// ("No. 5", "Jan. 12"); otherwise they may ("Is it? No. I think…").
	beforeNumber = map[string]bool{
		"No.": true, "no.": true, "Nos.": true, "Jan.": true, "Feb.": true,
		"Mar.": true, "Apr.": true, "Jun.": true, "Jul.": true, "Aug.": true,
		"Sep.": true, "Sept.": true, "Oct.": true, "Nov.": true, "Dec.": true,
		"p.": true, "pp.": true, "vol.": true, "Vol.": true, "ch.": true,
		"Ch.": true,
	}
)

// joins reports whether the UAX #29 boundary at b, ending the sentence that
// starts at start, is vetoed.
func joins(text []byte, flags []uint8, start, b int) bool {
	if flags[b-1]&flagKeep != 0 {
		return true // inside a URL, code span or structural prefix
	}
	next, _ := utf8.DecodeRune(text[b:])
	// No space after the terminator: "main.Go", "a?b=1", "v1.Beta" are
	// names, not two sentences. Only for ASCII, so "字。它" still splits.
	if c := text[b-1]; (c == '.' || c == '?' || c == '!') && next < utf8.RuneSelf &&
		(unicode.IsLetter(next) || unicode.IsDigit(next)) {
		return true
	}
	sent := stdlite.TrimRight(text[start:b], " \t")
	word := sent
	if i := anyof.LastIndex(sent, " (\"'“‘"); i >= 0 {
		word = sent[i+1:]
	}
	if titles[string(word)] {
		return true
	}
	if beforeNumber[string(word)] && unicode.IsDigit(next) {
		return true
	}
	return false
}

// suspicious are characters that, left raw in a Text node of the live tail,
// mean a construct is still open ("*bold", "[link](", "`code", "&amp",
// "$x" a formula whose closing "$" may still come).
const suspicious = "*_`[]<|~\\&$"

// held reports whether text[s:e] of a tail run must wait for the block to
// settle because its markdown may still change how it reads.
func held(r *run, s, e int) bool {
	for i := s; i < e; i++ {
		if r.flags[i]&flagRaw != 0 && strings.IndexByte(suspicious, r.text[i]) >= 0 {
			return true
		}
	}
	return false
}

// units returns the units of a run from answer offset from on (what comes
// before was already said). A complete run (its block ended) is spoken to
// the end; an incomplete one only up to its last confirmed sentence, and
// not past a sentence whose markdown is still open.
func (r *run) units(complete bool, from int) []Unit {
	if r.whole {
		if !complete || r.end <= from {
			return nil
		}
		// A paragraph whose first sentences were said before a setext
		// underline made it a heading says the rest; a summary (code,
		// table) is never said in part, so it has no bytes past from.
		s := 0
		for s < len(r.text) && r.pos[s] < from {
			s++
		}
		if s == len(r.text) {
			return nil
		}
		return []Unit{r.unit(s, len(r.text), true)}
	}
	ends := sentenceEnds(r.text, r.flags, complete)
	var out []Unit
	s := 0
	for i, e := range ends {
		if !complete && held(r, s, e) {
			break
		}
		last := complete && i == len(ends)-1
		// A sentence said in part already (a stall flushed its first
		// words, or a re-parse reshaped the block) says only the rest.
		for s < e && r.pos[s] < from {
			s++
		}
		if s < e || last && r.end > from {
			if u := r.unit(s, e, last); u.Text != "" && u.End > from {
				out = append(out, u)
			}
		}
		s = e
	}
	return out
}

// unit builds the unit for text[s:e]; last marks the run's final unit,
// which ends at the block's end and always with a full stop, so a listener
// hears the boundary.
func (r *run) unit(s, e int, last bool) Unit {
	for s < e && r.text[s] == ' ' {
		s++
	}
	for e > s && r.text[e-1] == ' ' {
		e--
	}
	if s == e {
		return Unit{}
	}
	u := Unit{
		Pos:  r.pos[s],
		End:  r.pos[e-1] + 1,
		Text: stdlite.JoinFields(r.speakable(s, e)),
	}
	if last {
		u.End = max(u.End, r.end)
		u.Text = withStop(u.Text)
	}
	return u
}

// closers may follow a sentence's terminator.
const closers = ")]}\"'”’»"

// endsSentence reports whether s ends the way a sentence or clause ends.
func endsSentence(s string) bool {
	s = strings.TrimRight(s, closers+" ")
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?…:;。！？", r)
}

// withStop ends s with a full stop unless it already ends a sentence.
func withStop(s string) string {
	if s == "" || endsSentence(s) {
		return s
	}
	return strings.TrimRight(s, ",—–- ") + "."
}

// speakable returns text[s:e] without the markdown delimiters the parser
// left unmatched, which a stopped or cut-off answer can end with ("Hello
// *wor"): a screen reader would read them out as "star". A delimiter run
// that flanks a word on one side only ("*wor", "end_", "`code") is
// dropped; one between spaces ("5 * 3") or inside a word ("snake_case")
// is content and stays. A raw '|' (a table that never formed) is a pause,
// and the "](" seam of an unfinished link loses its bracket.
func (r *run) speakable(s, e int) string {
	var b strings.Builder
	isSpace := func(i int) bool {
		return i < s || i >= e || r.text[i] == ' '
	}
	for i := s; i < e; i++ {
		c := r.text[i]
		if r.flags[i]&flagRaw == 0 {
			b.WriteByte(c)
			continue
		}
		switch c {
		case '`':
			continue
		case '|':
			b.WriteByte(' ')
			continue
		case ']':
			if i+1 < e && r.text[i+1] == '(' {
				continue
			}
		case '*', '_', '~':
			j := i
			for j < e && r.text[j] == c && r.flags[j]&flagRaw != 0 {
				j++
			}
			if isSpace(i-1) != isSpace(j) {
				i = j - 1
				continue
			}
			b.Write(r.text[i:j])
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
