package main

import (
	"github.com/trickle-dev/trickle/stream"
)

// dialectFlag is a --dialect flag: a stream.Dialect, read with
// stream.ParseDialect (an unknown name fails the command with the valid
// ones).
type dialectFlag stream.Dialect

func (f *dialectFlag) String() string {
	if f == nil || *f == "" {
		return string(stream.DialectAuto)
	}
	return string(*f)
}

func (f *dialectFlag) Set(s string) error {
	d, err := stream.ParseDialect(s)
	if err != nil {
		return err
	}
	*f = dialectFlag(d)
	return nil
}

// dialectHelp is what --dialect's line of a usage text lists.
var dialectHelp = "auto (default), " + stream.DialectNames(stream.Dialects())
