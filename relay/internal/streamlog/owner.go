package streamlog

// SetOwner records the identity that made the stream (with auth on), set
// before the stream is registered: only that identity may resume, inspect
// or stop it. "" leaves the stream anyone's.
func (l *Log) SetOwner(identity string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.owner = identity
}

// Owner is the identity that made the stream ("" for anyone's).
func (l *Log) Owner() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owner
}
