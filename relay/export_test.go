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
