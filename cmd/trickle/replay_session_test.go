package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/element"
)

// screen is what the element shows after a frame: the settled HTML and the
// live tail, at the frame's time.
type screen struct {
	AtMS    float64
	Settled string
	Tail    string
}

// elementRun drives a element.Session the way the element does, written
// independently of replay's simulation: every byte piece waits in an inbox
// until the next animation frame, which hands over everything that arrived
// before it (each piece with its arrival time), ends the answer when the
// session turns terminal or the input is exhausted, and runs one Frame;
// frames run every 1/60 s until the announcer has nothing left. Arrival
// times come from a separate stream.Pipeline counting the tokens before
// each line, at pace tokens per second.
func elementRun(t *testing.T, input []byte, contentType string, pace float64) ([]screen, []replayAnnouncement) {
	t.Helper()
	type piece struct {
		b  []byte
		at time.Duration
	}
	var pieces []piece
	tokens := 0
	counter, err := stream.NewPipeline(stream.WithContentType(contentType), stream.WithEventHandler(func(e stream.Event) {
		if (e.Kind == stream.KindText || e.Kind == stream.KindThinking) && e.Text != "" {
			tokens++
		}
	}))
	require.NoError(t, err)
	perToken := time.Duration(float64(time.Second) / pace)
	splitLines(input, func(b []byte) {
		pieces = append(pieces, piece{b: b, at: time.Duration(tokens) * perToken})
		_, _ = counter.Write(b)
	})

	t0 := time.Unix(0, 0).UTC()
	now := t0
	sess, err := element.NewSession(element.Config{Dialect: "auto", ContentType: contentType, Announce: "sentences", Now: func() time.Time { return now }})
	require.NoError(t, err)
	ms := func() float64 { return float64(now.Sub(t0).Round(10*time.Microsecond)) / 1e6 }

	var screens []screen
	var anns []replayAnnouncement
	var settled, tail string
	next, final := 0, false
	for tick := 1; tick < 1_000_000; tick++ {
		now = t0.Add(time.Duration(tick) * frameInterval)
		for !sess.Ended() && next < len(pieces) && t0.Add(pieces[next].at).Before(now) {
			err := sess.WriteAt(pieces[next].b, t0.Add(pieces[next].at))
			next++
			if err != nil || sess.Terminal() || next == len(pieces) {
				sess.End(nil)
			}
		}
		p := sess.Frame()
		settled += p.Append
		if p.TailChanged {
			tail = p.Tail
		}
		if p.Final {
			if p.Unwrap {
				settled += tail
			}
			tail, final = "", true
		}
		if p.Append != "" || p.TailChanged || p.Final {
			screens = append(screens, screen{AtMS: ms(), Settled: settled, Tail: tail})
		}
		for _, a := range p.Announce {
			anns = append(anns, replayAnnouncement{AtMS: ms(), Text: a})
		}
		if p.StatusChanged {
			anns = append(anns, replayAnnouncement{AtMS: ms(), Text: p.Status, Status: true})
		}
		if _, waiting := sess.NextAnnouncement(); final && !waiting {
			return screens, anns
		}
	}
	t.Fatal("the announcer never drained")
	return nil, nil
}

// Replay runs the widget's own Session: for every recording, at a slow
// pace, the standard pace and with everything arriving before the first
// frame, what replay prints — every frame's screen and every announcement
// with its time — is what a Session driven as the element drives it shows.
func TestReplayShowsWhatTheWidgetsSessionShows(t *testing.T) {
	files := recordingFiles(t)
	more, err := filepath.Glob(filepath.Join("testdata", "*.sse"))
	require.NoError(t, err)
	files = append(files, more...)
	for _, f := range files {
		input, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, pace := range []float64{30, defaultPace, 1e9} {
			t.Run(fmt.Sprintf("%s/pace=%g", filepath.Base(f), pace), func(t *testing.T) {
				r := replayJSON(t, "", "--frames", "--pace", fmt.Sprint(pace), f)
				var got []screen
				var settled strings.Builder
				for _, fr := range r.Frames {
					settled.WriteString(fr.Append)
					got = append(got, screen{AtMS: fr.AtMS, Settled: settled.String(), Tail: fr.Tail})
				}
				wantScreens, wantAnns := elementRun(t, input, contentTypeOf(f), pace)
				require.Equal(t, wantScreens, got)
				require.Equal(t, wantAnns, r.Announcements)
				require.NotEmpty(t, r.Announcements, "at least the final status")
			})
		}
	}
}
