package element

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTheGCPacerCollectsOnlyAtIdleMomentsWithNoAnswerStreaming(t *testing.T) {
	var idleAsks, collections int
	g := &GCPacer{Idle: func() { idleAsks++ }, Collect: func() { collections++ }}

	g.Begin()
	g.Begin() // two elements stream
	g.End()
	require.Zero(t, idleAsks, "one answer still streams: no collection asked for")
	g.End()
	require.Equal(t, 1, idleAsks, "the last answer ended: one idle collection asked for")
	g.OnIdle()
	require.Equal(t, 1, collections)

	g.Begin()
	g.End()
	g.Begin() // a new answer starts before the idle moment comes
	g.OnIdle()
	require.Equal(t, 1, collections, "no collection while an answer streams")
	g.End()
	require.Equal(t, 3, idleAsks, "its end asks again")
	g.OnIdle()
	require.Equal(t, 2, collections)

	g.End() // an End without Begin does not go below zero
	g.OnIdle()
	require.Equal(t, 3, collections)
	g.Begin()
	g.OnIdle()
	require.Equal(t, 3, collections, "the count came back to one streaming answer, not zero")
}

func TestTheGCPacerAsksForOneIdleCollectionAtATime(t *testing.T) {
	var idleAsks int
	g := &GCPacer{Idle: func() { idleAsks++ }}
	for range 3 {
		g.Begin()
		g.End()
	}
	require.Equal(t, 1, idleAsks, "answers that end before the idle moment share one collection")
	g.OnIdle() // a nil Collect is allowed
	g.Begin()
	g.End()
	require.Equal(t, 2, idleAsks)
}

func TestTheGCPacerCollectsAtIdleAfterAStoredAnswerIsShown(t *testing.T) {
	var idleAsks, collections int
	g := &GCPacer{Idle: func() { idleAsks++ }, Collect: func() { collections++ }}
	g.Shown()
	require.Equal(t, 1, idleAsks, "a shown answer asks for an idle collection")
	g.Shown()
	require.Equal(t, 1, idleAsks, "one at a time: the next shown answer shares it")
	g.OnIdle()
	require.Equal(t, 1, collections)

	g.Begin()
	g.Shown()
	require.Equal(t, 1, idleAsks, "an answer streams: its End asks, not the shown one")
	g.End()
	require.Equal(t, 2, idleAsks)
	g.OnIdle()
	require.Equal(t, 2, collections)
}
