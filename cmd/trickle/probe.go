package main

import (
	"fmt"
	"io"
)

func probe(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "trickle probe: not built yet")
	return 1
}
