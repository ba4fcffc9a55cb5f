package protocol

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// full is an update with every field set, its strings what a model might
// send.
func full() Update {
	const nasty = "a\"b\\c\u2028d</script>\xff<img onerror=x>"
	return Update{ID: 7, Reset: true, HasPatch: true, Text: nasty, State: "failed", StreamID: nasty, SetStreamID: true,
		Metrics: `{"ttft_ms":1}`, N: 3, Resolve: "failed", Gone: true, Arrived: 1733100000123.25,
		Patch: Patch{Append: "<p>" + nasty + "</p>", TailChanged: true, TailPatch: TailPatch{Path: []int{2, 0}, Keep: 1, Text: nasty, HTML: "<b>x</b>", Trim: 3},
			Thinking: nasty, Tools: nasty, ToolsChanged: true, Sources: nasty, SourcesChanged: true, Marked: nasty, HasMarked: true,
			Announce: []string{nasty, "two"}, Speak: []string{nasty}, Status: nasty, StatusChanged: true, Shown: nasty, ShownChanged: true,
			Stalled: true, StalledChanged: true, Final: true, Unwrap: true},
		End:    &Ending{Status: "failed", Notice: nasty, Retry: true, Detail: nasty, Rows: [][2]string{{"TTFT", "1 ms"}}, Message: `{"role":"assistant"}`},
		Events: []DOMEvent{{Name: "trickle-error", Detail: `{"message":"x"}`}},
	}
}

func keysOf(ks []Key) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Key)
	}
	return out
}

// TestTheKeyTablesAreWhatTheEncoderWrites: an update with every field set
// is JSON, and its keys, its patch's and its ending's are exactly the
// tables' (which contract.js gives the page): a key the encoder writes
// that the table lacks, or one the table keeps that nothing writes, fails.
func TestTheKeyTablesAreWhatTheEncoderWrites(t *testing.T) {
	u := full()
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(u.AppendJSON(nil), &got))
	require.ElementsMatch(t, keysOf(UpdateKeys), slices.Collect(maps.Keys(got)))

	var patch, end map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got[UpdatePatch], &patch))
	require.ElementsMatch(t, keysOf(PatchKeys), slices.Collect(maps.Keys(patch)))
	require.NoError(t, json.Unmarshal(got[UpdateEnd], &end))
	require.ElementsMatch(t, keysOf(EndKeys), slices.Collect(maps.Keys(end)))

	var say struct {
		T string            `json:"t"`
		U []json.RawMessage `json:"u"`
	}
	require.NoError(t, json.Unmarshal(AppendSay(nil, &u), &say))
	require.Equal(t, TypeSay, say.T)
	require.JSONEq(t, string(u.AppendJSON(nil)), string(say.U[0]))
	require.NoError(t, json.Unmarshal(AppendFrame(nil, []Update{u, {ID: 8}}), &say))
	require.Equal(t, TypeFrame, say.T)
	require.Len(t, say.U, 2)
	require.JSONEq(t, `{"id":8}`, string(say.U[1]))
}

// TestAnUnchangedTailKeepsMinusOne: a patch that only settles HTML tells
// the page the tail did not change (keep -1, an empty path), and an
// update that changes nothing is empty.
func TestAnUnchangedTailKeepsMinusOne(t *testing.T) {
	u := Update{ID: 1, HasPatch: true, Patch: Patch{Append: "<p>x</p>"}}
	require.JSONEq(t, `{"id":1,"p":{"a":"<p>x</p>","path":[],"keep":-1}}`, string(u.AppendJSON(nil)))
	require.True(t, (&Update{ID: 4}).Empty())
	require.True(t, (&Patch{Tail: "<p>x</p>"}).Empty(), "the tail's HTML alone is Go's own")
	require.Equal(t, "<p>a &lt;b&gt;</p><p>c</p>", AnnouncementHTML([]string{"a <b>", "c"}))
}
