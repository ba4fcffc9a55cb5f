package relay_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThePublicPackageDocumentsEveryFieldAndAliasesNoInternalType holds
// what go doc shows of package relay: every exported field of an
// exported struct (the options', the defaults', the infos') has its own
// comment, and no exported type is an alias of a type in an internal
// package (go doc would show an alias without its fields, and callers
// could not name what they need from it).
func TestThePublicPackageDocumentsEveryFieldAndAliasesNoInternalType(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	types := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		imports := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			local := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				local = im.Name.Name
			}
			imports[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			types++
			if sel, ok := ts.Type.(*ast.SelectorExpr); ok && ts.Assign.IsValid() {
				if x, ok := sel.X.(*ast.Ident); ok && strings.Contains(imports[x.Name], "/internal/") {
					t.Errorf("%s: type %s aliases %s.%s, of an internal package: declare it here", name, ts.Name.Name, x.Name, sel.Sel.Name)
				}
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				for _, id := range fl.Names {
					if id.IsExported() && fl.Doc == nil && fl.Comment == nil {
						t.Errorf("%s: %s.%s has no comment: go doc shows it bare", name, ts.Name.Name, id.Name)
					}
				}
			}
			return true
		})
	}
	require.Greater(t, types, 10)
}
