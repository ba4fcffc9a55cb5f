// Command overlay writes the default widget build's overlay (package
// stdswap) into a directory and prints go build's flag for it, so that
// make can run tests with regexp swapped as the widget has it:
//
//	go test $(go run ./wasm/internal/stdswap/overlay bin/stdswap) ./render/
package main

import (
	"fmt"
	"os"

	"github.com/trickle-dev/trickle/wasm/internal/stdswap"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: overlay DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	flag, err := stdswap.Overlay("go", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(flag)
}
