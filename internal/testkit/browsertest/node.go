package browsertest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartNode runs a Node server (node with args, in dir) until the test
// ends, and returns the URL it prints on its "listening URL" line. Every
// other line it prints goes to onLine (nil: dropped), in order, from one
// goroutine; by the time the test's cleanup has run, every line has been
// handed over. A server that exits or stays silent for 30 s before it
// listens fails the test with what it wrote to stderr. The test servers
// under testdata/ and the README's backend speak this way.
func StartNode(t testing.TB, dir string, onLine func(line string), args ...string) string {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
	ready := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "listening "); ok {
				select {
				case ready <- u:
				default:
				}
			} else if onLine != nil {
				onLine(line)
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-read // every line read before Wait closes the pipe
		_ = cmd.Wait()
	})
	select {
	case u := <-ready:
		return u
	case <-read:
		t.Fatalf("node %s ended before it listened:\n%s", strings.Join(args, " "), stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s did not listen within 30 s:\n%s", strings.Join(args, " "), stderr.String())
	}
	return ""
}
