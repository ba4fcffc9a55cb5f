package relay

import (
	"context"
	"time"
)

// Crash makes a relay with a Redis store behave, towards the store, as if
// its process had died: it writes nothing more (no events, no ends, no
// lease renewal). Only tests can call it.
func (s *Server) Crash() {
	st, ok := s.store.(*redisStore)
	if !ok {
		panic("relay: Crash needs a Redis store")
	}
	st.crashed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st.close(ctx)
}
