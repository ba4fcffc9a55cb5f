// Command jsonxgen writes the jsonx readers of a package's structs from
// their json tags, as stringer writes String methods from constants: each
// field's name is written once, in its tag, and the reader that
// encoding/json would be (exact name first, then the case-folded one;
// null leaves a field alone) is generated, so that the package decodes
// JSON without encoding/json and reflect (the widget's wasm).
//
// The roots are the struct types whose doc comment holds the directive
//
//	//jsonx:reader
//
// and every struct type of the package a root's fields reach gets a
// reader too: a method read(r *jsonx.Reader) and the list of its JSON
// names. A root also gets decode(data string) error, which reads a whole
// document (a *jsonx.SyntaxError, else the first *jsonx.TypeError); it
// keeps the Reader on its stack, so an event costs no allocation for it. A field may be a string, int, float64 or bool, a pointer to one,
// a struct of the package (by value, by pointer or in a slice), an
// anonymous struct, or a type with a method readRaw (it is handed the
// value's raw JSON text). Anything else is an error that names the field.
//
//	//go:generate go run ../internal/jsonx/jsonxgen -out readers_gen.go
//
// in the package's directory runs it.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	dir := flag.String("dir", ".", "the package's directory")
	out := flag.String("out", "readers_gen.go", "the file to write, in the package's directory")
	flag.Parse()
	src, err := Generate(*dir, *out)
	if err == nil {
		err = os.WriteFile(*dir+"/"+*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonxgen:", err)
		os.Exit(1)
	}
}
