package errtext

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprint("code ", e.code) }

// The errors behave as fmt.Errorf's do: the same text, and errors.Is,
// errors.As and errors.Unwrap find the same errors through them.
func TestWrapIsFmtErrorf(t *testing.T) {
	inner := &codeError{7}
	for _, tc := range []struct{ got, want error }{
		{Wrap("x: "+inner.Error(), inner), fmt.Errorf("x: %w", inner)},
		{Wrap(io.EOF.Error()+" (more)", io.EOF), fmt.Errorf("%w (more)", io.EOF)},
		{Wrap2(io.EOF.Error()+": "+inner.Error(), io.EOF, inner), fmt.Errorf("%w: %w", io.EOF, inner)},
	} {
		require.Equal(t, tc.want.Error(), tc.got.Error())
		require.Equal(t, errors.Unwrap(tc.want), errors.Unwrap(tc.got))
		for _, target := range []error{io.EOF, inner, io.ErrUnexpectedEOF} {
			require.Equal(t, errors.Is(tc.want, target), errors.Is(tc.got, target), "%v in %v", target, tc.want)
		}
		var a, b *codeError
		require.Equal(t, errors.As(tc.want, &a), errors.As(tc.got, &b))
		require.Equal(t, a, b)
	}
	require.Equal(t, fmt.Sprintf("%v", error(nil)), Text(nil))
	require.Equal(t, fmt.Sprintf("%v", inner), Text(inner))
}
