package render

import (
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// dirAuto is the AST transformer behind WithDirAuto: it sets dir="auto" on
// the outermost blocks that hold running text (paragraphs, headings, lists,
// block quotes, tables, the footnote list), which goldmark's renderers
// write out as an attribute. It does not go inside a list, quote or table:
// the browser's dir=auto looks for the first strong character but skips
// descendants that have a dir of their own, so a list whose items each
// had one would find none and lay itself (markers, indent) out left to
// right around right-to-left items. A list or quote takes the direction of
// its first words, its items inherit it. Code blocks are left alone (code
// reads left to right; the stylesheet says so).
type dirAuto struct{}

var dirAttr, autoValue = []byte("dir"), []byte("auto")

// Transform implements parser.ASTTransformer.
func (dirAuto) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n == ast.Node(doc) {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindParagraph, ast.KindHeading, ast.KindBlockquote, ast.KindList,
			extast.KindTable, extast.KindFootnoteList:
			n.SetAttribute(dirAttr, autoValue)
		}
		// Only the document's own children: everything below inherits.
		return ast.WalkSkipChildren, nil
	})
}
