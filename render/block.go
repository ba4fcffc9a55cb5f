package render

import "github.com/yuin/goldmark/ast"

// Block is one top-level markdown block together with the source its
// segments point into. Package a11y reads blocks to build what a screen
// reader hears, so the answer is parsed once.
type Block struct {
	// Node is the block's AST node (a direct child of the document).
	Node ast.Node
	// Source is the text that Node's segments index into.
	Source []byte
	// Offset is where Source[0] sits in the whole answer, in bytes.
	Offset int
}
