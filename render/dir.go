package render

import (
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// dirAuto is the AST transformer behind WithDirAuto: it sets dir="auto" on
// the blocks that hold running text, which goldmark's renderers write out
// as an attribute. Code blocks are left alone (code reads left to right;
// the stylesheet says so), and so are inline nodes: it walks blocks only.
type dirAuto struct{}

var dirAttr, autoValue = []byte("dir"), []byte("auto")

// Transform implements parser.ASTTransformer.
func (dirAuto) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.Type() == ast.TypeInline {
			return ast.WalkSkipChildren, nil
		}
		switch n.Kind() {
		case ast.KindParagraph, ast.KindHeading, ast.KindBlockquote, ast.KindList, ast.KindListItem,
			extast.KindTable, extast.KindFootnoteList, extast.KindFootnote:
			n.SetAttribute(dirAttr, autoValue)
		case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock:
			return ast.WalkSkipChildren, nil
		case extast.KindTableRow, extast.KindTableHeader:
			// Cells are inline containers: nothing below them is a block.
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}
