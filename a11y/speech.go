package a11y

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"

	"github.com/trickle-dev/trickle/internal/anyof"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/render"
)

// Byte flags of a run's speech text.
const (
	// flagKeep marks bytes after which no sentence may end: structural
	// prefixes ("1. "), code spans and URLs, whose dots and question marks
	// are not punctuation of the sentence around them.
	flagKeep uint8 = 1 << iota
	// flagRaw marks bytes copied verbatim from a markdown Text node. A raw
	// '*', '_', '`', '[' … there means the parser has not (yet) matched the
	// construct, so in the live tail the sentence waits until it is settled.
	flagRaw
)

// run is the speech of one leaf block (a paragraph, a heading, one list
// item's paragraph, a table, a code block): plain text in reading order with,
// for every byte, where its source sits in the whole answer. A run's end is a
// hard sentence boundary.
type run struct {
	text  []byte
	pos   []int   // absolute answer offset of each text byte's source
	flags []uint8 // flagKeep, flagRaw per byte
	// whole runs (headings, tables, code blocks) are one unit, announced
	// only once the block is complete.
	whole bool
	// prefix is how many leading bytes are structure ("Bullet: "), not
	// content: a run with nothing after its prefix says nothing.
	prefix int
	// start and end are the block's source span in the answer.
	start, end int
}

func (r *run) add(s string, pos int, flags uint8) {
	for i := 0; i < len(s); i++ {
		r.text = append(r.text, s[i])
		r.pos = append(r.pos, pos)
		r.flags = append(r.flags, flags)
	}
}

// addSource appends source bytes one to one, so each byte keeps its own
// position.
func (r *run) addSource(b []byte, pos int, flags uint8) {
	n := len(r.text)
	r.text = append(r.text, b...)
	r.pos = slices.Grow(r.pos, len(b))[:n+len(b)]
	r.flags = slices.Grow(r.flags, len(b))[:n+len(b)]
	for i := range b {
		r.pos[n+i] = pos + i
		r.flags[n+i] = flags
	}
}

// space appends one separating space unless the text already ends in one.
func (r *run) space(pos int) {
	if n := len(r.text); n == 0 || r.text[n-1] == ' ' {
		return
	}
	r.add(" ", pos, 0)
}

func (r *run) empty() bool {
	return len(stdlite.TrimSpaceBytes(r.text[r.prefix:])) == 0
}

// projector walks one top-level block and produces its runs.
type projector struct {
	src    []byte
	offset int
	runs   []run
	// pending is a structural prefix ("Quote: ", "Bullet: ") waiting for
	// the first run inside the container that asked for it.
	pending string
	// cursor is the last source position seen, used for nodes that carry
	// none (autolinks, synthetic strings).
	cursor int
}

// project returns the runs of one rendered block.
func project(b render.Block) []run {
	p := &projector{src: b.Source, offset: b.Offset}
	if b.Node == nil {
		return nil
	}
	if s, _, ok := span(b.Node); ok {
		p.cursor = s
	}
	p.block(b.Node)
	return p.runs
}

// span returns the source span of n from the segments of its descendants.
func span(n ast.Node) (start, stop int, ok bool) {
	if t, isTable := n.(*extast.Table); isTable {
		return tableSpan(t)
	}
	return spanOf(n)
}

// spanOf is span by walking every descendant.
func spanOf(n ast.Node) (start, stop int, ok bool) {
	start, stop = -1, -1
	see := func(a, b int) {
		if start < 0 || a < start {
			start = a
		}
		if b > stop {
			stop = b
		}
	}
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if c.Type() == ast.TypeBlock {
			lines := c.Lines()
			for i := 0; i < lines.Len(); i++ {
				s := lines.At(i)
				see(s.Start, s.Stop)
			}
			if f, ok := c.(*ast.FencedCodeBlock); ok && f.Info != nil {
				see(f.Info.Segment.Start, f.Info.Segment.Stop)
			}
		}
		if t, ok := c.(*ast.Text); ok {
			see(t.Segment.Start, t.Segment.Stop)
		}
		return ast.WalkContinue, nil
	})
	return start, stop, start >= 0
}

// tableSpan is span for a table without walking every cell: a streaming
// table is the live block of every frame until it ends, and grows. Its
// rows are its lines in order, so the first segment is in the header and
// the last in the last row that has one (a row of padding cells has none).
func tableSpan(t *extast.Table) (start, stop int, ok bool) {
	first := t.FirstChild()
	if first == nil {
		return -1, -1, false
	}
	start, _, ok = span(first)
	if !ok {
		// No segment in the header: no shortcut, look at everything.
		return spanOf(t)
	}
	for r := t.LastChild(); r != nil; r = r.PreviousSibling() {
		if _, e, found := span(r); found {
			return start, e, true
		}
	}
	return -1, -1, false
}

// newRun starts a run for block n, consuming any pending prefix.
func (p *projector) newRun(n ast.Node) run {
	var r run
	if s, e, ok := span(n); ok {
		r.start, r.end = p.offset+s, p.offset+e
		p.cursor = s
	} else {
		r.start, r.end = p.offset+p.cursor, p.offset+p.cursor
	}
	if p.pending != "" {
		r.add(p.pending, r.start, flagKeep)
		r.prefix = len(r.text)
		p.pending = ""
	}
	return r
}

func (p *projector) emit(r run) {
	if r.empty() {
		return
	}
	p.runs = append(p.runs, r)
}

// block projects a block node and its children.
func (p *projector) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r := p.newRun(n)
		p.inlines(&r, n)
		p.emit(r)
	case *ast.Heading:
		p.pending += "Heading: "
		r := p.newRun(n)
		p.inlines(&r, n)
		r.whole = true
		p.emit(r)
	case *ast.Blockquote:
		p.pending += "Quote: "
		p.children(n)
		p.pending = ""
	case *ast.List:
		number := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			prefix := "Bullet: "
			if n.IsOrdered() {
				prefix = strconv.Itoa(number) + ". "
				number++
			}
			if box := taskBox(item); box != nil {
				state := "To do: "
				if box.IsChecked {
					state = "Done: "
				}
				if n.IsOrdered() {
					prefix += state
				} else {
					prefix = state
				}
			}
			p.pending += prefix
			p.children(item)
			p.pending = ""
		}
	case *ast.FencedCodeBlock:
		p.code(n, codeLanguage(n.Language(p.src)))
	case *ast.CodeBlock:
		p.code(n, "")
	case *extast.Table:
		p.table(n)
	case *ast.ThematicBreak, *ast.HTMLBlock, *ast.LinkReferenceDefinition:
		// Silent: a rule is visual only, and raw HTML is never read out
		// as markup (it is untrusted model output).
	default:
		p.children(n)
	}
}

func (p *projector) children(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		p.block(c)
	}
}

// taskBox returns the GFM task checkbox of a list item, if it has one.
func taskBox(item ast.Node) *extast.TaskCheckBox {
	first := item.FirstChild()
	if first == nil {
		return nil
	}
	box, _ := first.FirstChild().(*extast.TaskCheckBox)
	return box
}

func (p *projector) code(n ast.Node, lang string) {
	r := p.newRun(n)
	lines := n.Lines().Len()
	var b strings.Builder
	b.WriteString("Code block, ")
	if lang != "" {
		b.WriteString(lang)
		b.WriteString(", ")
	}
	b.WriteString(count(lines, "line", "lines"))
	b.WriteString(".")
	r.add(b.String(), r.start, flagKeep)
	r.whole = true
	p.emit(r)
}

func (p *projector) table(n *extast.Table) {
	r := p.newRun(n)
	var header []string
	rows, cols := 0, 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c.(type) {
		case *extast.TableHeader:
			for cell := c.FirstChild(); cell != nil; cell = cell.NextSibling() {
				var cr run
				p.inlines(&cr, cell)
				header = append(header, stdlite.TrimSpace(string(cr.text)))
			}
			cols = max(cols, c.ChildCount())
		case *extast.TableRow:
			rows++
			cols = max(cols, c.ChildCount())
		}
	}
	var b strings.Builder
	b.WriteString("Table, ")
	b.WriteString(count(rows, "row", "rows"))
	b.WriteString(", ")
	b.WriteString(count(cols, "column", "columns"))
	named := header[:0:0]
	for _, h := range header {
		if h != "" {
			named = append(named, h)
		}
	}
	if len(named) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(named, ", "))
	}
	r.add(b.String(), r.start, flagKeep)
	r.whole = true
	p.emit(r)
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// inlines appends the plain text of n's inline descendants to r.
func (p *projector) inlines(r *run, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		p.inline(r, c)
	}
}

func (p *projector) inline(r *run, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		p.cursor = n.Segment.Stop
		v := n.Value(p.src)
		if n.IsRaw() {
			r.addSource(v, p.offset+n.Segment.Start, 0)
		} else {
			p.resolve(r, v, n.Segment.Start)
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.space(p.offset + n.Segment.Stop)
		}
	case *ast.String:
		r.add(string(n.Value), p.offset+p.cursor, 0)
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				v := t.Segment.Value(p.src)
				at := p.offset + t.Segment.Start
				for i, b := range v {
					if b == '\n' {
						b = ' '
					}
					r.text = append(r.text, b)
					r.pos = append(r.pos, at+i)
					r.flags = append(r.flags, flagKeep)
				}
				p.cursor = t.Segment.Stop
			}
		}
	case *ast.AutoLink:
		label := n.Label(p.src)
		at := p.cursor
		if i := bytes.Index(p.src[min(p.cursor, len(p.src)):], label); i >= 0 {
			at = p.cursor + i
			p.cursor = at + len(label)
		}
		r.addSource(label, p.offset+at, flagKeep)
	case *ast.RawHTML:
		// Tags are never spoken; text between them still is.
		segs := n.Segments
		if segs.Len() > 0 {
			p.cursor = segs.At(segs.Len() - 1).Stop
		}
	case *render.Math:
		// A formula is said as its TeX, marked as one: never its
		// delimiters, and no sentence ends at a "." inside it.
		segs := n.TeX
		if segs.Len() == 0 {
			return
		}
		at := p.offset + segs.At(0).Start
		tex := stdlite.JoinFields(string(n.Value(p.src)))
		r.add("(formula: ", at, flagKeep)
		r.add(tex, at, flagKeep)
		p.cursor = segs.At(segs.Len()-1).Stop + len(n.Open)
		r.add(")", p.offset+p.cursor, 0)
	case *extast.TaskCheckBox:
		// Announced by the list item's prefix.
	case *extast.Strikethrough:
		// Struck-out words are retracted, not asserted: read plainly they
		// run into the correction ("never acceptable Fixed windows are
		// fine"), so they are marked as deleted.
		at := p.offset + p.cursor
		r.add("(deleted: ", at, flagKeep)
		p.inlines(r, n)
		r.add(")", p.offset+p.cursor, 0)
	default:
		// Emphasis, links, images (their alt text), strikethrough: the
		// children carry the words.
		p.inlines(r, n)
	}
}

// resolve appends a Text node's value with backslash escapes and character
// references resolved, as the HTML renderer does, keeping positions.
func (p *projector) resolve(r *run, v []byte, start int) {
	at := p.offset + start
	for i := 0; i < len(v); {
		j := anyof.Index(v[i:], "\\&")
		if j < 0 {
			r.addSource(v[i:], at+i, flagRaw)
			return
		}
		r.addSource(v[i:i+j], at+i, flagRaw)
		i += j
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]):
			r.addSource(v[i+1:i+2], at+i+1, 0)
			i += 2
			continue
		case c == '&':
			if j := bytes.IndexByte(v[i:min(len(v), i+40)], ';'); j > 1 {
				ref := v[i : i+j+1]
				out := util.ResolveEntityNames(util.ResolveNumericReferences(ref))
				if !bytes.Equal(out, ref) {
					r.add(string(out), at+i+j, 0)
					i += j + 1
					continue
				}
			}
		}
		r.addSource(v[i:i+1], at+i, flagRaw)
		i++
	}
}

// languages names the common fence info strings the way people say them.
var languages = map[string]string{
	"go": "Go", "golang": "Go", "js": "JavaScript", "javascript": "JavaScript",
	"jsx": "JSX", "ts": "TypeScript", "typescript": "TypeScript", "tsx": "TSX",
	"py": "Python", "python": "Python", "python3": "Python", "rb": "Ruby",
	"ruby": "Ruby", "rs": "Rust", "rust": "Rust", "c": "C", "h": "C",
	"cpp": "C++", "c++": "C++", "cc": "C++", "cs": "C sharp", "csharp": "C sharp",
	"c#": "C sharp", "f#": "F sharp", "fsharp": "F sharp", "java": "Java", "kt": "Kotlin", "kotlin": "Kotlin",
	"swift": "Swift", "php": "PHP", "sh": "Shell", "shell": "Shell",
	"bash": "Bash", "zsh": "Zsh", "console": "Console", "ps1": "PowerShell",
	"powershell": "PowerShell", "sql": "SQL", "html": "HTML", "xml": "XML",
	"css": "CSS", "scss": "SCSS", "json": "JSON", "jsonc": "JSON",
	"yaml": "YAML", "yml": "YAML", "toml": "TOML", "ini": "INI",
	"md": "Markdown", "markdown": "Markdown", "diff": "Diff",
	"dockerfile": "Dockerfile", "docker": "Dockerfile", "makefile": "Makefile",
	"make": "Makefile", "lua": "Lua", "r": "R", "scala": "Scala",
	"haskell": "Haskell", "hs": "Haskell", "elixir": "Elixir", "ex": "Elixir",
	"erlang": "Erlang", "dart": "Dart", "vue": "Vue", "graphql": "GraphQL",
	"proto": "Protocol Buffers", "protobuf": "Protocol Buffers",
	"nginx": "Nginx", "regex": "Regex", "csv": "CSV", "wasm": "WebAssembly",
	"zig": "Zig", "perl": "Perl", "objc": "Objective-C", "matlab": "MATLAB",
	"latex": "LaTeX", "tex": "LaTeX", "http": "HTTP", "hcl": "HCL",
	"terraform": "Terraform", "tf": "Terraform",
}

// codeLanguage turns a fence's language word into a speakable name. The info
// string is untrusted: for names not in the table anything but letters,
// digits and "+-." is dropped so no markup can ride along, and a word nobody says ("text", "plaintext")
// gives no language.
func codeLanguage(info []byte) string {
	lower := strings.ToLower(string(info))
	switch lower {
	case "text", "txt", "plaintext", "plain", "output", "none":
		return ""
	}
	if name, ok := languages[lower]; ok {
		return name
	}
	var b strings.Builder
	for _, r := range string(info) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("+-.", r) {
			b.WriteRune(r)
		}
		if b.Len() >= 24 {
			break
		}
	}
	word := stdlite.Trim(b.String(), "-.")
	if word == "" {
		return ""
	}
	first, size := utf8.DecodeRuneInString(word)
	return string(unicode.ToUpper(first)) + word[size:]
}
