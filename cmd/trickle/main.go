// Command trickle is Trickle's one binary:
//
//	trickle serve   the relay (default)
//	trickle replay  run a recorded stream through the browser's pipeline
//	trickle probe   measure a live stream and say whether it is buffered
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `trickle — stream a language model's answer into any web page

Usage:
  trickle [serve] [flags]        the relay on 127.0.0.1:8080 (default)
  trickle replay [flags] FILE|-  run a recorded stream through the widget's pipeline
  trickle probe [flags] URL      measure a live stream: latency and buffering

Run 'trickle COMMAND --help' for the flags of each command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stdout, stderr)
	case "replay":
		return replay(args, stdin, stdout, stderr)
	case "probe":
		return probe(args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "trickle: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}
