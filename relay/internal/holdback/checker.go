package holdback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Request is what a checker is asked about one sentence: the JSON body
// the relay POSTs to the checker's URL.
type Request struct {
	// Sentence is the answer's source text from the end of the last
	// cleared sentence to the end of this one (markdown as the model
	// wrote it), or the answer's incomplete tail at its end.
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

// maxVerdict bounds the checker's answer the relay reads.
const maxVerdict = 64 << 10

// httpChecker POSTs each Request as JSON and reads {"allow": bool}.
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
	if err := json.Unmarshal(b, &v); err != nil || v.Allow == nil {
		return false, fmt.Errorf("%w: %s answered %.200q, not {\"allow\": true|false}", ErrChecker, c.url, b)
	}
	return *v.Allow, nil
}

// wordChecker is the simulated checker (Settings.Sim "block=WORD"): it
// blocks any sentence containing the word, in any case.
type wordChecker struct{ word string }

func (c wordChecker) Check(_ context.Context, r Request) (bool, error) {
	return !strings.Contains(strings.ToLower(r.Sentence), c.word), nil
}
