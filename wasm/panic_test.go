package wasm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

type stringer struct{}

func (stringer) String() string { return "a stringer" }

// panicText says what fmt's %v says for every kind of value it handles,
// the runtime's own errors among them.
func TestPanicTextIsWhatFmtWouldSay(t *testing.T) {
	runtimeError := func() (r any) {
		defer func() { r = recover() }()
		var s []int
		_ = s[len(s)+3]
		return nil
	}()
	badAssertion := func(v any) (r any) {
		defer func() { r = recover() }()
		_ = v.(string)
		return nil
	}(1)
	for _, v := range []any{
		runtimeError, badAssertion, errors.New("boom"), fmt.Errorf("wrapped: %w", errors.New("inner")),
		"a string", "", stringer{}, 0, -42, int64(-1 << 62), int32(7), uint(9), uint64(1 << 63), uint32(3), true, false,
	} {
		require.Equal(t, fmt.Sprint(v), panicText(v), "%T", v)
	}
	require.Equal(t, "a panic of a value that cannot be shown", panicText(struct{ x int }{1}))
}
