package holdback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
)

// Request is what a checker is asked about one sentence: the JSON body
// the relay POSTs to the checker's URL.
type Request struct {
	// Text is the sentence rendered, as the a11y package tells it to a
	// screen reader (markdown emphasis and entities resolved; a heading or
	// a list item named as such, "Heading: Tea."; a code block or a table
	// summarised, "Code block, Go, 3 lines."), then Normalize'd (NFKC,
	// without zero-width characters and soft hyphens). Match prose here,
	// and code and tables in Sentence.
	Text string `json:"text"`
	// Sentence is the answer's source text from the end of the last
	// cleared sentence to the end of this one (markdown as the model
	// wrote it), or the answer's incomplete tail at its end: what the
	// rendered text came from, for a checker that reads markdown (a code
	// block's contents are here, not in Text).
	Sentence string `json:"sentence"`
	// Context is the answer's text before Sentence, all cleared.
	Context   string `json:"context"`
	StreamID  string `json:"stream_id"`
	RequestID string `json:"request_id"`
}

// A Checker clears or blocks one sentence. An error (the checker failed,
// or ctx ended) is a verdict of its own: Settings.OnError decides it.
type Checker interface {
	Check(ctx context.Context, r Request) (allow bool, err error)
}

// ErrChecker is wrapped by every failure of the HTTP checker.
var ErrChecker = errors.New("holdback: the checker failed")

// ErrNoAllow: the checker answered JSON without "allow". It is a block,
// whatever Settings.OnError says.
var ErrNoAllow = errors.New(`holdback: the checker's answer has no "allow"; blocked`)

// maxVerdict bounds the checker's answer the relay reads.
const maxVerdict = 64 << 10

// httpChecker POSTs each Request as JSON and reads {"allow": bool}; an
// answer without "allow" (or not JSON) is the checker failing, which
// Settings.OnError decides (a block by default).
type httpChecker struct {
	url    string
	client *http.Client
}

func (c *httpChecker) Check(ctx context.Context, r Request) (bool, error) {
	body, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrChecker, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrChecker, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxVerdict))
	if err != nil {
		return false, fmt.Errorf("%w: reading the answer: %w", ErrChecker, err)
	}
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("%w: %s answered %s", ErrChecker, c.url, resp.Status)
	}
	var v struct {
		Allow *bool `json:"allow"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return false, fmt.Errorf("%w: %s answered %.200q, not {\"allow\": true|false}", ErrChecker, c.url, b)
	}
	if v.Allow == nil {
		// The checker answered, and did not allow: a block whatever
		// OnError says (a checker that answers {} must not let text out).
		return false, fmt.Errorf("%w: %s answered %.200q", ErrNoAllow, c.url, b)
	}
	return *v.Allow, nil
}

// wordChecker is the simulated checker (Settings.Sim "block=WORD"): it
// blocks any sentence containing the word, in any case, in its rendered
// text, its source, or its source without entities and emphasis markers
// (a table cell's, which Text summarises), each normalised (Normalize):
// markdown, entities, zero-width characters and fullwidth letters do not
// hide it.
type wordChecker struct{ word string }

// emphasis drops markdown's inline markers from a source.
var emphasis = strings.NewReplacer("*", "", "_", "", "~", "", "`", "")

func (c wordChecker) Check(_ context.Context, r Request) (bool, error) {
	w := strings.ToLower(Normalize(c.word))
	for _, s := range []string{r.Text, r.Sentence, emphasis.Replace(html.UnescapeString(r.Sentence))} {
		if strings.Contains(strings.ToLower(Normalize(s)), w) {
			return false, nil
		}
	}
	return true, nil
}
