// Command trickle is Trickle's one binary:
//
//	trickle serve   the relay (default)
//	trickle replay  run a recorded stream through the browser's pipeline
//	trickle probe   measure a live stream and say whether it is buffered
//	trickle token   mint a JWT the relay's --auth-secret-env accepts
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `trickle — stream a language model's answer into any web page

Usage:
  trickle COMMAND [flags]

Commands:
  serve   the relay: widget, example pages and answers over SSE and WebSocket (default)
  replay  run a recorded stream through the widget's pipeline and print what is seen and heard
  probe   stream from a URL and report latency and whether something buffers the stream
  token   mint a JWT that 'trickle serve --auth-secret-env' accepts, for tests and scripts
  help    this list; 'trickle help COMMAND' prints one command's flags

Without a command, trickle serves: 'trickle --addr :9090' is 'trickle serve --addr :9090'.
`

// commands are the subcommands, each taking its arguments and the three
// standard streams and returning the exit code.
var commands = map[string]func(args []string, stdin io.Reader, stdout, stderr io.Writer) int{
	"serve":  func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return serve(args, stdout, stderr) },
	"replay": replay,
	"probe":  func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return probe(args, stdout, stderr) },
	"token":  token,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	name := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		if len(args) == 0 {
			fmt.Fprint(stdout, usage)
			return 0
		}
		cmd, ok := commands[args[0]]
		if !ok {
			fmt.Fprintf(stderr, "trickle help: unknown command %q\n\n%s", args[0], usage)
			return 2
		}
		// The same text as 'trickle COMMAND --help', on standard output.
		return cmd([]string{"--help"}, stdin, stdout, stdout)
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "trickle: unknown command %q\n\n%s", name, usage)
		return 2
	}
	if helpAsked(args) {
		// Asked-for help is output, not an error: it goes to standard
		// output (a mistaken flag still prints it on standard error).
		return cmd(args, stdin, stdout, stdout)
	}
	return cmd(args, stdin, stdout, stderr)
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// helpAsked reports whether a help flag comes before the end of the flags.
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}
