package element

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/render"
)

// Two elements of one page stream answers with the same footnote labels:
// each element's ids carry its own prefix (the command's element number),
// and each stays equal to the one-shot rendering with that prefix at every
// frame.
func TestTwoElementsAnswersWithTheSameFootnotesGetTheirOwnIDsAndStayEqualToConvert(t *testing.T) {
	text := "Intro.\n\nA claim[^1] and another[^2].\n\n| a | b |\n| - | - |\n| x[^1] | y |\n\n[^1]: The first note.\n[^2]: The second, longer note.\n"
	policy := render.Policy{SameOrigin: "https://app.test"}
	ids := map[string]string{} // id → the element it belongs to
	for _, id := range []int{1, 2} {
		c, err := ParseCommand(`{"t":"ask","id":` + strconv.Itoa(id) + `,"n":1,"url":"https://app.test/x","dialect":"plain","origin":"https://app.test"}`)
		require.NoError(t, err)
		s := newSession(t, c.Config())
		want := func(upTo int) string {
			return convert(t, text[:upTo], RenderOptions(policy, render.WithFootnotePrefix(FootnotePrefix(id)))...)
		}
		var sc screen
		for i := 0; i < len(text); i += 5 {
			j := min(len(text), i+5)
			d, _ := json.Marshal(map[string]string{"delta": text[i:j]})
			require.NoError(t, s.Write([]byte("data: "+string(d)+"\n\n")))
			sc.apply(t, s.Frame())
			require.Equal(t, want(j), sc.settled+sc.tail, "after %d bytes", j)
		}
		require.NoError(t, s.Write([]byte("data: [DONE]\n\n")))
		s.End(nil)
		for !sc.final {
			sc.apply(t, s.Frame())
		}
		require.Equal(t, want(len(text)), sc.settled)
		found := regexp.MustCompile(`(?:id="|href="#)([^"]*fn[^"]*)"`).FindAllStringSubmatch(sc.settled, -1)
		require.NotEmpty(t, found)
		for _, m := range found {
			require.Regexp(t, `^trickle-`+strconv.Itoa(id)+`-fn(ref\d*)?:\d+$`, m[1])
			if other, ok := ids[m[1]]; ok {
				require.Equal(t, strconv.Itoa(id), other, "id %s is another element's too", m[1])
			}
			ids[m[1]] = strconv.Itoa(id)
		}
	}
}
