// Package render turns a growing markdown answer into DOM patches. Blocks
// that no continuation of the text can change are rendered once and never
// touched again; only the live tail after them is re-parsed and re-rendered.
// The settled HTML plus the tail HTML always equals a one-shot goldmark
// render of the same text (Convert). The link and image safety policy lives
// here too.
//
// # Configuration
//
// One goldmark configuration serves Convert and Document: CommonMark, GFM
// (tables, strikethrough, task lists, linkify), footnotes, raw HTML omitted
// (goldmark's html.WithUnsafe is never used: model output is untrusted), no
// heading IDs or typographer (each makes one block's HTML depend on
// others). Options add dir="auto" on text blocks (WithDirAuto) and an
// extension such as syntax highlighting (WithExtension, render/highlight);
// Convert with the same options stays the oracle.
//
// # Footnotes
//
// A footnote's number and the list of notes depend on the whole text, so
// nothing at or after the first footnote mark ("[^" outside code) settles
// before Finish: that part stays the live tail, the list of notes at its
// end, and all of it settles in the final frame (see footnote.go).
// WithFootnotePrefix gives the notes' ids a prefix, so that several
// answers on one page never share one.
//
// # Math
//
// Formulas between $…$ or \(…\) (inline) and $$…$$ or \[…\] (display)
// are kept exact: no backslash escape, emphasis or entity inside touches
// the TeX. Each renders as <span data-trickle-math="inline"> or
// <span data-trickle-math="display"> holding the TeX as escaped text (a
// span, so a display formula can sit in a paragraph or list item), for the
// page to convert to MathML; until its closing delimiter arrives a formula
// is its markdown source. Prices are not math: a single "$" opens a
// formula only when a non-space follows it, and the next "$" on its line
// closes it only when a non-space precedes it and no digit follows it
// (else the first "$" is text), so "$750 and $300", "costs $5" and
// "$5-$10" stay text (Pandoc's rule, plus: the first candidate closer
// decides). A formula is an inline node (Math), so it never changes the
// block structure or settling (see math.go).
//
// # Settling
//
// A top-level block settles when no continuation of the text can change its
// HTML:
//
//   - The last line of the text (after the last newline) is never final.
//   - The block parser reads one line at a time and never reopens a closed
//     block, so a block followed by another that starts on a complete line
//     is final: lists that may still gain items or turn loose, block quotes
//     and paragraphs open to lazy continuation, indented code across blank
//     lines, HTML blocks, open fences, tables gaining rows all stay in the
//     tail until a complete line starts something that cannot continue them
//     (or an unfinished line starts, unindented, with a letter: nothing
//     typed after that letter can make the line continue them).
//   - Paragraphs are special: a setext underline turns them into a heading,
//     a delimiter row into a table, and link reference definitions are cut
//     out of them when they close. A paragraph transformer records top-level
//     paragraphs still open at the last complete line; every block cut out of
//     them stays in the tail, and the tail never starts between two pieces
//     of one paragraph. A paragraph closed by a complete line (blank line,
//     interrupting block) is final.
//   - Some blocks are final from their own syntax: an ATX heading or a
//     thematic break on a complete line, a setext heading whose underline is
//     complete, a fenced code block or HTML block whose closing line is.
//   - Link reference definitions apply to the whole document, earlier
//     blocks included. A block that shows a literal "]" outside code (a
//     reference such as "[1]" whose definition may still come) does not
//     settle, nor does one using a definition that is not itself final.
//     Definitions in the settled part are handed to every tail parse.
//
// A table streams as the live block until a line ends it. Its finished
// rows (complete lines) cannot change while it stays open, so a table at
// the start of the live part keeps their HTML and nodes, and a frame
// parses and renders only the header, the delimiter row and the rows after
// them (see tableRows): a frame costs what its new row costs, not the
// table.
//
// The settled part is a prefix of the text: blocks settle in order, so one
// block that may still change through a definition (a citation "[1]" with
// no definition yet) keeps everything after it out of Frame.Append. Such
// closed blocks wait as "pending": their HTML is kept and shown at the start
// of the tail, and they are parsed again only when the definitions in the
// text change, so a frame still parses only the live part. When the
// definition arrives and is final, they settle; at Finish, everything does.
//
// # Safety
//
// Links: http, https, mailto and relative URLs only (Policy.LinkSchemes),
// after entity decoding and the browser's own cleanup (controls, tabs and
// newlines stripped, case folded); anything else renders as its text. Every
// link carries rel="noopener noreferrer nofollow ugc". Images load from
// relative URLs, Policy.SameOrigin and Policy.AllowedImageOrigins only;
// others become a link (if the URL is a safe link) or their alt text, so
// rendering never makes a request to a third party. The same renderer
// serves autolinks and linkify.
//
// It never calls JavaScript and never touches the DOM; package wasm applies
// its patches.
package render
