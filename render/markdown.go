package render

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Option configures Convert and NewDocument. The same options give the same
// goldmark configuration and the same safety policy in both, which is what
// makes Convert the oracle for Document.
type Option func(*config)

type config struct {
	policy    Policy
	hasPolicy bool
	repair    bool
	dirAuto   bool
	ext       *Extension
	fnPrefix  []byte
}

// WithPolicy sets the link and image safety policy. Without it the zero
// Policy applies: links to http, https, mailto and relative URLs only,
// images from relative URLs only. An entry of AllowedImageOrigins or a
// SameOrigin that is not an origin, or a LinkSchemes entry that is not a
// scheme, is refused (an *OptionError naming the field and the entry).
func WithPolicy(p Policy) Option {
	return func(c *config) {
		c.policy = p
		c.hasPolicy = true
	}
}

// WithRepair makes Document hide, in the live tail only, what the next
// characters would take back: an ambiguous last line (a lone "-" or "=" that
// may become a setext underline), a table header line whose delimiter row has
// not arrived, a half-typed link or image. Settled HTML and the final frame
// are never affected. Off by default; Convert ignores it.
func WithRepair(on bool) Option {
	return func(c *config) { c.repair = on }
}

// WithDirAuto gives every paragraph, heading, list, list item, block
// quote, table and footnote list dir="auto": the browser picks each
// block's direction from its first strong character, so an Arabic or
// Hebrew answer reads right to left and a mixed answer reads each block in
// its own direction. Convert and Document both honour it (it is part of
// the configuration Convert is the oracle for). Off by default.
func WithDirAuto(on bool) Option {
	return func(c *config) { c.dirAuto = on }
}

// WithFootnotePrefix puts prefix before every id a footnote gets, and in
// the links to it: goldmark's "fn:1" and "fnref:1" become prefix+"fn:1"
// and prefix+"fnref:1". Two answers on one page, each with its own
// prefix, then never share an id, and a note's links lead to the note of
// their own answer. prefix holds ASCII letters, digits, "-" and "_" only
// (it is written into attributes as is); any other character is refused.
// It is a per-parse setting, not a separate goldmark configuration: any
// number of prefixes share one cached instance. Convert and Document both
// honour it.
func WithFootnotePrefix(prefix string) Option {
	return func(c *config) { c.fnPrefix = []byte(prefix) }
}

// footnotePrefixKey carries a parse's footnote id prefix in its
// parser.Context; footnotePrefixer moves it onto the parsed document,
// where footnoteIDPrefix, called by goldmark's footnote renderer with the
// node it renders, finds it.
var footnotePrefixKey = parser.NewContextKey()

var footnotePrefixAttr = []byte("trickle-footnote-prefix")

type footnotePrefixer struct{}

// Transform implements parser.ASTTransformer.
func (footnotePrefixer) Transform(doc *ast.Document, _ text.Reader, pc parser.Context) {
	if p, ok := pc.Get(footnotePrefixKey).([]byte); ok && len(p) > 0 {
		doc.SetAttribute(footnotePrefixAttr, p)
	}
}

func footnoteIDPrefix(n ast.Node) []byte {
	if doc := n.OwnerDocument(); doc != nil {
		if v, ok := doc.Attribute(footnotePrefixAttr); ok {
			return v.([]byte)
		}
	}
	return nil
}

// parseContext is a new parser.Context for a parse with c's per-parse
// settings (the footnote prefix).
func (c config) parseContext() parser.Context {
	pc := parser.NewContext()
	if len(c.fnPrefix) > 0 {
		pc.Set(footnotePrefixKey, c.fnPrefix)
	}
	return pc
}

// Extension is a goldmark extension added to the shared configuration
// (Convert and Document alike), under a name that identifies it. It is how
// an optional, large feature stays out of builds that do not use it: the
// package that provides it (render/highlight) is imported only by the
// builds that want it.
type Extension struct {
	// Name identifies the extension and its settings: two Extensions with
	// the same Name must configure goldmark the same way (instances are
	// cached by it).
	Name string
	// Extender adds the extension to goldmark.
	Extender goldmark.Extender
}

// WithExtension adds e to the configuration. Only blocks that can no
// longer change are rendered with it once and for all, so e must render a
// block from that block alone (syntax highlighting of a code block does;
// anything that numbers or collects across blocks does not). Its Name and
// Extender must be set; nil adds nothing.
func WithExtension(e *Extension) Option {
	return func(c *config) { c.ext = e }
}

// newConfig applies opts and names the first option whose value cannot
// work.
func newConfig(opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c, c.check()
}

// newMarkdown builds the one goldmark configuration every render uses:
// CommonMark plus GFM (tables, strikethrough, task lists, linkify) and
// footnotes, raw HTML omitted (html.WithUnsafe is never set: model output
// is untrusted), and the policy renderer for links, images and autolinks.
// No heading IDs and no typographer: each of those makes a block's HTML
// depend on other blocks, which would defeat settling. Footnotes do too
// (numbers follow the order of first references, the list collects every
// definition); Document keeps everything from the first footnote mark on
// in the live tail (see footnoteFrom).
func newMarkdown(c config) goldmark.Markdown {
	exts := []goldmark.Extender{extension.GFM, extension.NewFootnote(extension.WithFootnoteIDPrefixFunction(footnoteIDPrefix))}
	if c.ext != nil {
		exts = append(exts, c.ext.Extender)
	}
	popts := []parser.Option{
		parser.WithParagraphTransformers(util.Prioritized(paragraphWatcher{}, 1)),
		parser.WithASTTransformers(util.Prioritized(footnotePrefixer{}, 999)),
		parser.WithInlineParsers(util.Prioritized(mathParser{}, 150)),
	}
	if c.dirAuto {
		popts = append(popts, parser.WithASTTransformers(util.Prioritized(dirAuto{}, 1000)))
	}
	return goldmark.New(
		goldmark.WithExtensions(exts...),
		goldmark.WithParserOptions(popts...),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(newPolicyRenderer(c.policy), 100), util.Prioritized(mathRenderer{}, 100)),
		),
	)
}

var (
	defaultMarkdownOnce sync.Once
	defaultMarkdown     goldmark.Markdown
)

// policyMarkdown caches instances per configuration: a page uses one or
// two, and building goldmark with GFM costs more than a small render.
var (
	policyMu       sync.Mutex
	policyMarkdown = map[string]goldmark.Markdown{}
)

const maxCachedPolicies = 32

// markdownFor returns the goldmark instance for c, built once per
// configuration and shared (goldmark parsers and renderers are safe for
// concurrent use once built).
func markdownFor(c config) goldmark.Markdown {
	if !c.hasPolicy {
		c.policy = Policy{}
	}
	if c.policy.isZero() && !c.dirAuto && c.ext == nil {
		defaultMarkdownOnce.Do(func() { defaultMarkdown = newMarkdown(config{}) })
		return defaultMarkdown
	}
	key := c.policy.key() + "\x02" + strconv.FormatBool(c.dirAuto)
	if c.ext != nil {
		key += "\x02" + c.ext.Name
	}
	policyMu.Lock()
	defer policyMu.Unlock()
	if md, ok := policyMarkdown[key]; ok {
		return md
	}
	md := newMarkdown(c)
	if len(policyMarkdown) < maxCachedPolicies {
		policyMarkdown[key] = md
	}
	return md
}

// Convert renders text in one go, with the same goldmark configuration and
// policy as Document. It is the reference Document is tested against:
// streaming changes when HTML is produced, never what it is. An option
// value that cannot work is an *OptionError (matching ErrBadOption)
// naming it, as NewDocument's.
func Convert(text string, opts ...Option) (string, error) {
	c, err := newConfig(opts)
	if err != nil {
		return "", err
	}
	md := markdownFor(c)
	var buf bytes.Buffer
	buf.Grow(len(text) + len(text)/4)
	// goldmark only fails when the writer fails; a bytes.Buffer never does.
	_ = md.Convert([]byte(text), &buf, parser.WithContext(c.parseContext()))
	return buf.String(), nil
}

// lowerASCII lowercases ASCII letters only (URL schemes and hosts).
func lowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}
