package protocol

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func batch(took float64, chunks []string, arrived []float64) []byte {
	bs := make([][]byte, len(chunks))
	for i, c := range chunks {
		bs[i] = []byte(c)
	}
	return AppendInbox(nil, took, bs, arrived)
}

func TestInboxBatchesSplitIntoChunksOnGosClock(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	got, err := ParseInbox(batch(1000, []string{"data: a\n", "", "\ndata: b\n\n"}, []float64{984.5, 990, 999}), now, nil)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "data: a\n", string(got[0].Data))
	require.Equal(t, now.Add(-15500*time.Microsecond), got[0].At, "arrived 15.5 ms before the take")
	require.Empty(t, got[1].Data)
	require.Equal(t, "\ndata: b\n\n", string(got[2].Data))
	require.Equal(t, now.Add(-time.Millisecond), got[2].At)

	got = append(got[:0], InboxChunk{})
	got, err = ParseInbox(batch(5, []string{"x"}, []float64{9}), now, got[:0])
	require.NoError(t, err)
	require.Equal(t, now, got[0].At, "a chunk is never placed after the take")
}

func TestMalformedInboxBatchesAreAnError(t *testing.T) {
	good := batch(10, []string{"abc", "de"}, []float64{1, 2})
	for _, tc := range []struct {
		name  string
		batch []byte
	}{
		{"shorter than its header", good[:8]},
		{"a chunk count past the end", binary.LittleEndian.AppendUint32(good[:8:8], 1<<30)},
		{"bytes missing", good[:len(good)-1]},
		{"bytes left over", append(good[:len(good):len(good)], 'x')},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInbox(tc.batch, time.Now(), nil)
			require.ErrorIs(t, err, ErrInboxBatch)
		})
	}
}
