// Package a11y decides what a screen reader hears while an answer streams:
// the speech projection of the rendered markdown, a streaming sentence
// segmenter that emits a sentence only once its end is confirmed, and the
// announcer policy (merge, pace, final status).
//
// It never calls JavaScript and never parses markdown itself: it reads the
// goldmark blocks package render produced (render.Block), so the answer is
// parsed once. Package wasm puts its announcements into the page's live
// regions.
//
// # Speech projection
//
// Every block becomes plain text in reading order, never markdown syntax:
// "Heading: Install.", "Bullet: …", "3. …" (an ordered item's number),
// "Done: …" / "To do: …" (task items), "Quote: …", "Code block, Go, 12
// lines." (the code is never read), "Table, 4 rows, 3 columns: Name,
// Price, Stock." (body rows; header cells named), an image's alt text, a
// link's text, emphasis and inline code as their words, entities resolved,
// struck-out text as "(deleted: …)". Thematic breaks and raw HTML blocks
// are silent; inline HTML tags are dropped and their text kept. Delimiters
// the parser left unmatched ("Hello *wor" when an answer stops) are not
// spoken.
//
// # Sentences
//
// Boundaries are Unicode's (UAX #29, github.com/clipperhouse/uax29/v2),
// conformance-tested against SentenceBreakTest, with documented layers:
// a short list of abbreviations that do not end a sentence (Mr., Mrs., Ms.,
// Dr., Prof., St., Fig., e.g., i.e., vs., cf.; No., months, p./pp. only
// before a number) — deliberately not ICU's long list, which merges real
// sentences such as "Click OK. Then…"; no boundary right after an ASCII
// terminator followed by a letter or digit without a space (URLs, file
// names, versions) or inside code spans, URLs and structural prefixes; a
// "…" followed by a capital ends a sentence. "etc." and "a.m."/"p.m." end
// a sentence before a capital and not before a lowercase word, as Unicode
// says. A sentence is confirmed only when the text after it decides it;
// the end of a block and the end of the stream are hard boundaries. A unit
// longer than MaxUnitRunes is split at a clause mark.
//
// # Announcer policy
//
// Units are keyed by their source span in the answer: re-renders, repeated
// frames and a reconnect that replays the stream never say anything twice.
// Units confirmed within MergeWindow of the first waiting one are merged
// into one announcement; content announcements are at least MinGap apart
// and at most PerSecond in any second. After StallAfter without new text,
// a trailing sentence that already reads as finished (a terminator that is
// not a decimal point, an abbreviation or part of a URL) is spoken instead
// of waiting for the text that would confirm it, so no unit waits more
// than two seconds; an unfinished trailing sentence waits for the end of
// the stream. Statuses go to a separate region: "Assistant is responding."
// at Start, and exactly one of "Answer complete.", "Answer stopped.",
// "Answer incomplete." or "Answer failed: <the error in words>." at End,
// after the last content (EndWith says the caller's words instead: the
// widget's say why in a sentence, in the page's language). The end speaks
// what the tail still holds, but of a stopped answer (StopWith) only its
// whole sentences: the one the stop cut, often mid-word, is not read out. ModeComplete says the
// whole answer once at the end; ModeOff says only the statuses.
//
// # Limits
//
// What was said cannot be taken back. In the live tail a sentence waits
// while its markdown may still change how it reads (a raw '*', '`', '[',
// '|' … means a construct is open), and a tail block counts as ended once
// another starts; but a setext underline ("===") arriving under a paragraph
// whose first sentences were said turns only the rest into "Heading: …",
// and a stall-flushed sentence that the model then continues without a
// space is heard in two pieces. Models rarely do either. MarkdownChars
// counts characters, so code that contains '|' or '*' counts too.
package a11y
