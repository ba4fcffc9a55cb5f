package stream

import (
	"errors"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// textOracle is the text a body reads as, by Go's own conversion: each
// byte that is not part of a UTF-8 character is U+FFFD, and a BOM at the
// start is dropped.
func textOracle(body []byte) string {
	s := strings.TrimPrefix(string(body), "\uFEFF")
	return string([]rune(s))
}

func TestATextBodyReadsTheSameAtEveryCutWhateverItsBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	// Characters of every length, a BOM, and bytes that are not UTF-8
	// (a lone continuation, a lead without its end, 0xFF).
	pieces := []string{"a", "é", "—", "🍵", "日本", "\n", "\uFEFF", "\xEF\xBB", "\x80", "\xE2\x82", "\xFF", "\xF0\x9F\x8D"}
	for n := 0; n < 60; n++ {
		var b strings.Builder
		if n%3 == 0 {
			b.WriteString("\uFEFF")
		}
		for k := rng.Intn(12); k >= 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		body := []byte(b.String())
		want := textOracle(body)
		opts := []Option{WithContentType("text/plain")}
		whole := run(t, body, nil, opts...)
		require.Equal(t, "complete", whole.Status, "%q", body)
		require.Equal(t, want, whole.Text, "%q", body)
		for _, cuts := range cutSets(len(body), false) {
			require.Equal(t, whole, run(t, body, cuts, opts...), "%q cut at %v", body, cuts)
		}
	}
}

func TestATextBodyEndsCompleteUnlessItsContentLengthWasNotReached(t *testing.T) {
	body := []byte("Cut here: 🍵 and more")
	for n := 0; n <= len(body); n++ {
		// Without a length, the end of the body is the end of the answer.
		s := run(t, body[:n], nil, WithContentType("text/plain"))
		require.Equal(t, "complete", s.Status)

		p := newPipeline(t, WithResponse(Response{ContentType: "text/plain", ContentLength: int64(len(body))}))
		_, err := p.Write(body[:n])
		require.NoError(t, err)
		err = p.Close()
		if n == len(body) {
			require.NoError(t, err)
			require.Equal(t, Complete, p.Answer().Status())
			require.Equal(t, string(body), p.Answer().Text())
			continue
		}
		require.ErrorIs(t, err, ErrIncomplete)
		require.Equal(t, Incomplete, p.Answer().Status())
		require.Contains(t, err.Error(), "closed after "+strconv.Itoa(n)+" of the "+strconv.Itoa(len(body))+" bytes")
		// Nothing but what came: a cut character is not shown half.
		require.True(t, strings.HasPrefix(string(body), p.Answer().Text()), "%q", p.Answer().Text())
	}
}

func TestATextBodyCutByTheTransportFails(t *testing.T) {
	p := newPipeline(t, WithContentType("text/plain"))
	feed(t, p, "The answer so ")
	p.Fail(errors.New("network error"))
	require.Equal(t, Failed, p.Answer().Status())
	require.Equal(t, "The answer so ", p.Answer().Text())
	require.ErrorContains(t, p.Answer().Err(), "network error")
}

func TestResponseOfReadsTheLengthOnlyOfABodyThatIsNotEncoded(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", "42")
	require.Equal(t, Response{ContentType: "text/plain; charset=utf-8", ContentLength: 42}, ResponseOf(h.Get))
	h.Set("Content-Encoding", "identity")
	require.Equal(t, int64(42), ResponseOf(h.Get).ContentLength)
	h.Set("Content-Encoding", "gzip")
	require.Equal(t, int64(-1), ResponseOf(h.Get).ContentLength, "the decoded bytes are not the ones counted")
	h.Del("Content-Encoding")
	for _, bad := range []string{"", "-1", "lots", "1e3"} {
		h.Set("Content-Length", bad)
		require.Equal(t, int64(-1), ResponseOf(h.Get).ContentLength, "%q", bad)
	}
}

func TestTheTextDialectAndAContentTypeEachChooseTheFraming(t *testing.T) {
	// Asked for, text is text whatever the content type says.
	p := newPipeline(t, WithDialect(DialectText), WithContentType("text/event-stream"))
	feed(t, p, "data: {\"delta\":\"x\"}\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, "data: {\"delta\":\"x\"}\n\n", p.Answer().Text())
	require.Equal(t, FramingText, p.Framing())

	// Another dialect asked for: its events, though the server says
	// text/plain.
	p = newPipeline(t, WithDialect(DialectPlain), WithContentType("text/plain"))
	feed(t, p, "data: {\"delta\":\"x\"}\n\n", "data: [DONE]\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, "x", p.Answer().Text())
	require.Equal(t, DialectPlain, p.Dialect())
}

func TestRespondChoosesTheFramingOnlyBeforeTheFirstByte(t *testing.T) {
	p := newPipeline(t)
	p.Respond(Response{ContentType: "text/plain", ContentLength: 5})
	require.Equal(t, FramingText, p.Framing())
	require.Equal(t, DialectText, p.Dialect())
	feed(t, p, "Hello")
	require.NoError(t, p.Close())
	require.Equal(t, Complete, p.Answer().Status())

	// A resumed stream keeps its framing: the new response's content type
	// does not change how its events are read.
	p = newPipeline(t)
	p.Respond(Response{ContentType: "text/event-stream", ContentLength: -1})
	feed(t, p, "id: s:1\ndata: {\"delta\":\"a\"}\n\n")
	p.Fail(errors.New("dropped"))
	p.Reconnect()
	p.Respond(Response{ContentType: "text/plain", ContentLength: -1})
	feed(t, p, "id: s:2\ndata: [DONE]\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, FramingSSE, p.Framing())
	require.Equal(t, Complete, p.Answer().Status())
	require.Equal(t, "a", p.Answer().Text())
}
