package main

import (
	"fmt"
	"io"
)

func replay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "trickle replay: not built yet")
	return 1
}
