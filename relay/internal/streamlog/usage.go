package streamlog

import "github.com/trickle-dev/trickle/relay/store"

// EstimateTokens says the stream's tokens are counted from the events it
// received (a real upstream's), not known.
func (l *Log) EstimateTokens() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.estimated = true
}

// usageLocked is the stream's usage as clients read it (Info, a stop's
// status, the store): behind a hold-back gate, until the answer completes,
// only the tokens released to clients count, not those the model
// generated and the gate withheld.
func (l *Log) usageLocked() store.Usage {
	if l.holder != nil && l.state != StateComplete {
		return store.Usage{CompletionTokens: l.tokens, Estimated: l.estimated}
	}
	return l.spentLocked()
}

// spentLocked is what the generation cost: the tokens the model reported,
// else the estimate. The limits count it (OnEnd), released or not.
func (l *Log) spentLocked() store.Usage {
	if l.reported > 0 {
		return store.Usage{CompletionTokens: l.reported}
	}
	return store.Usage{CompletionTokens: max(l.tokens, l.fromText), Estimated: l.estimated}
}

// EstimateAtLeast raises the stream's estimated tokens to n (a real
// upstream's, estimated from the bytes of its text) when it is more than
// its events: an upstream that reports no usage may send a long text in
// one event.
func (l *Log) EstimateAtLeast(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fromText = max(l.fromText, n)
}

// ReportTokens records the output tokens the model reported so far (a
// real upstream's usage): the stream's usage is then that, not a count
// of its events.
func (l *Log) ReportTokens(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reported = max(l.reported, n)
}

// OnEnd sets what learns, once, what a generation made here cost when it
// ends (with the log's lock held: it must not block). Set it before the
// generation starts.
func (l *Log) OnEnd(f func(store.Usage)) { l.onEnd = f }
