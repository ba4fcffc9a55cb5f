package render

import (
	"bytes"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
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
}

// WithPolicy sets the link and image safety policy. Without it the zero
// Policy applies: links to http, https, mailto and relative URLs only,
// images from relative URLs only.
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

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// newMarkdown builds the one goldmark configuration every render uses:
// CommonMark plus GFM (tables, strikethrough, task lists, linkify), raw HTML
// omitted (html.WithUnsafe is never set: model output is untrusted), and the
// policy renderer for links, images and autolinks. No footnotes, no heading
// IDs and no typographer: each of those makes a block's HTML depend on other
// blocks, which would defeat settling.
func newMarkdown(p Policy) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(
			parser.WithParagraphTransformers(util.Prioritized(paragraphWatcher{}, 1)),
		),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(newPolicyRenderer(p), 100)),
		),
	)
}

var (
	defaultMarkdownOnce sync.Once
	defaultMarkdown     goldmark.Markdown
)

// policyMarkdown caches instances per policy: a page uses one or two
// policies, and building goldmark with GFM costs more than a small render.
var (
	policyMu       sync.Mutex
	policyMarkdown = map[string]goldmark.Markdown{}
)

const maxCachedPolicies = 32

// markdownFor returns the goldmark instance for c, built once per policy
// and shared (goldmark parsers and renderers are safe for concurrent use
// once built).
func markdownFor(c config) goldmark.Markdown {
	if !c.hasPolicy || c.policy.isZero() {
		defaultMarkdownOnce.Do(func() { defaultMarkdown = newMarkdown(Policy{}) })
		return defaultMarkdown
	}
	key := c.policy.key()
	policyMu.Lock()
	defer policyMu.Unlock()
	if md, ok := policyMarkdown[key]; ok {
		return md
	}
	md := newMarkdown(c.policy)
	if len(policyMarkdown) < maxCachedPolicies {
		policyMarkdown[key] = md
	}
	return md
}

// Convert renders text in one go, with the same goldmark configuration and
// policy as Document. It is the reference Document is tested against:
// streaming changes when HTML is produced, never what it is.
func Convert(text string, opts ...Option) string {
	md := markdownFor(newConfig(opts))
	var buf bytes.Buffer
	buf.Grow(len(text) + len(text)/4)
	// goldmark only fails when the writer fails; a bytes.Buffer never does.
	_ = md.Convert([]byte(text), &buf)
	return buf.String()
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
