package holdback

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCutRewritesTheOneStringThatIsTheText(t *testing.T) {
	for _, c := range []struct {
		name, data, text string
		n                int
		want             string
	}{
		{"openai", `{"id":"c","choices":[{"index":0,"delta":{"content":"k. Wh"}}]}`, "k. Wh", 2,
			`{"id":"c","choices":[{"index":0,"delta":{"content":"k."}}]}`},
		{"anthropic", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"k. Wh"}}`, "k. Wh", 2,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"k."}}`},
		{"escaped as the upstream likes", `{"delta":"k.\u0020\n\u003cb>"}`, "k. \n<b>", 2, `{"delta":"k."}`},
		{"a key that reads as the text is not it", `{"k. Wh" : 1, "delta" : "k. Wh"}`, "k. Wh", 2, `{"k. Wh" : 1, "delta" : "k."}`},
		{"what is kept is escaped, not for HTML", `{"delta":"<a \"q\">\n\nb"}`, "<a \"q\">\n\nb", 9, `{"delta":"<a \"q\">\n\n"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := cut(c.data, c.text, c.n)
			require.True(t, ok)
			require.Equal(t, c.want, got)
		})
	}
}

func TestCutRefusesWhatItCannotTellApart(t *testing.T) {
	for _, c := range []struct{ name, data, text string }{
		{"the text twice", `{"role":"model","text":"model"}`, "model"},
		{"not there", `{"delta":"other"}`, "k. Wh"},
		{"not JSON", `k. Wh`, "k. Wh"},
		{"unterminated", `{"delta":"k. Wh`, "k. Wh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ok := cut(c.data, c.text, 2)
			require.False(t, ok)
		})
	}
}
