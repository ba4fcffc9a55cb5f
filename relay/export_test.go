package relay

// Crash makes a relay with a Redis store behave, towards the store, as if
// its process had died: it writes nothing more (no events, no ends, no
// lease renewal, its limits' slots included). Only tests can call it.
func (s *Server) Crash() {
	st, ok := s.store.(interface{ Crash() })
	if !ok {
		panic("relay: Crash needs a Redis store")
	}
	st.Crash()
	if c, ok := s.limits.Counter().(interface{ Crash() }); ok {
		c.Crash()
	}
}

// BodyDecodes is how many request bodies the relay has decoded: one per
// generation admitted or refused after its body was read.
func (s *Server) BodyDecodes() int64 { return s.bodyDecodes.Load() }

// MessagesDecodes is how many times the policy decoded a request's
// messages, all requests together.
func (s *Server) MessagesDecodes() int64 { return s.messagesDecodes.Load() }
