package main

import (
	"fmt"
	"io"
)

func serve(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "trickle serve: not built yet")
	return 1
}
