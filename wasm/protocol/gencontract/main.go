// Command gencontract writes the other sides of the page↔Go contract from
// its table (wasm/protocol/contract.go): the page's constants
// (wasm/web/contract.js), the attribute, event and string parts of the
// package's typings (wasm/web/types: trickle-answer.d.ts between its
// generated markers, react.d.ts and vue.d.ts whole), the attributes and
// events of custom-elements.json's element declarations, and the Go
// constants of the string keys (wasm/protocol/english.go), and the
// attribute, event and string tables of the elements' reference pages
// (docs/reference/trickle-answer.md, trickle-chat.md, between their
// generated markers).
//
//	go generate ./wasm/protocol
//
// runs it (go run ./wasm/protocol/gencontract -root . from the
// repository). It never touches a hand-written part: in the .d.ts only
// what lies between a pair of generated markers, in the manifest only the
// attributes and events of a declaration with a tagName.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trickle-dev/trickle/wasm/protocol"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	out, err := outputs(tableOf(), func(path string) ([]byte, error) {
		return os.ReadFile(filepath.Join(*root, path))
	})
	if err == nil {
		err = write(*root, out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencontract:", err)
		os.Exit(1)
	}
}

// write writes every output under root, leaving a file that did not change
// alone.
func write(root string, out map[string][]byte) error {
	for path, b := range out {
		full := filepath.Join(root, path)
		if old, err := os.ReadFile(full); err == nil && string(old) == string(b) {
			continue
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// tableOf is the contract table as package protocol declares it.
func tableOf() table {
	return table{
		Version:    protocol.Version,
		WorkerName: protocol.WorkerName,
		Attributes: protocol.Attributes,
		Inherited:  protocol.Inherited,
		Events:     protocol.Events,
		Messages:   protocol.Messages,
		Kinds:      protocol.Kinds,
		Strings:    protocol.Strings,
		UpdateKeys: protocol.UpdateKeys,
		PatchKeys:  protocol.PatchKeys,
		EndKeys:    protocol.EndKeys,
	}
}
