package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/trickle-dev/trickle/relay"
)

const tokenUsage = `trickle token — mint a JWT that trickle serve --auth-secret-env accepts, for tests
and scripts (a page's own backend mints its users' tokens: docs/security.md).

Usage:
  trickle token --sub ID [--ttl 10m] [--audience NAME] [--issuer NAME] [--auth-secret-env NAME]

It prints the token (HS256, with sub, iat and exp, and aud and iss when
given) on standard output:
  curl -H "Authorization: Bearer $(trickle token --sub alice)" ...

Flags:
`

// token is trickle token.
func token(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), tokenUsage)
		fs.PrintDefaults()
	}
	var (
		sub       = fs.String("sub", "", "the token's subject `ID`: the identity the relay's limits count (required)")
		ttl       = fs.Duration("ttl", 10*time.Minute, "how long the token is valid (at most "+relay.MaxTokenLifetime.String()+")")
		audience  = fs.String("audience", "", "the token's aud claim `NAME` (what trickle serve --auth-audience checks; default: none)")
		issuer    = fs.String("issuer", "", "the token's iss claim `NAME` (what trickle serve --auth-issuer checks; default: none)")
		secretEnv = fs.String("auth-secret-env", "TRICKLE_AUTH_SECRET", "read the secret from the environment variable `NAME` (the one trickle serve --auth-secret-env reads)")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trickle token: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *sub == "" {
		fmt.Fprintln(stderr, "trickle token: --sub is required: the identity the token stands for, e.g. --sub alice")
		return 2
	}
	if *ttl <= 0 || *ttl > relay.MaxTokenLifetime {
		fmt.Fprintf(stderr, "trickle token: --ttl %s: want a duration above 0 and at most %s\n", *ttl, relay.MaxTokenLifetime)
		return 2
	}
	secret := os.Getenv(*secretEnv)
	if secret == "" {
		fmt.Fprintf(stderr, "trickle token: --auth-secret-env %s: the variable is empty or unset\n", *secretEnv)
		return 2
	}
	tok, err := relay.MintTokenFor([]byte(secret), *sub, *ttl, *audience, *issuer)
	if err != nil {
		fmt.Fprintf(stderr, "trickle token: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	return 0
}
