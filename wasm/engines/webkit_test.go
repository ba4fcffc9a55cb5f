//go:build !(js && wasm)

package engines_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// miniBrowser finds the MiniBrowser WebKitGTK ships (Debian:
// webkit2gtk-driver pulls in libwebkit2gtk, which has it).
func miniBrowser() (string, error) {
	for _, pattern := range []string{"/usr/lib/*/webkit2gtk-4.*/MiniBrowser", "/usr/libexec/webkit2gtk-4.*/MiniBrowser", "/usr/lib/webkit2gtk-4.*/MiniBrowser"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[len(m)-1], nil
		}
	}
	return "", fmt.Errorf("no WebKitGTK MiniBrowser found")
}

func webkitMissing() error {
	if _, err := lookPath("WebKitWebDriver"); err != nil {
		return err
	}
	if _, err := lookPath("Xvfb"); err != nil {
		return err
	}
	if _, err := lookPath("dbus-daemon"); err != nil {
		return err
	}
	_, err := miniBrowser()
	return err
}

// startWebKit starts a virtual X display (Xvfb picks a free one and says
// which), WebKitWebDriver on a free loopback port, and a WebDriver session
// that launches MiniBrowser in automation mode on that display.
func startWebKit(t *testing.T, ctx context.Context) driver {
	t.Helper()
	mini, err := miniBrowser()
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	x := start(t, nil, "Xvfb", []string{"-displayfd", "3", "-nolisten", "tcp", "-screen", "0", "1280x900x24"}, nil, w)
	w.Close()
	displayc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		displayc <- strings.TrimSpace(line)
	}()
	var display string
	select {
	case display = <-displayc:
	case <-ctx.Done():
	}
	if _, err := strconv.Atoi(display); err != nil {
		t.Fatalf("Xvfb did not give a display number (%q):\n%s", display, x.output())
	}

	home := t.TempDir()
	bus := privateBus(t, ctx)
	port := freePort(t)
	wd := start(t, nil, "WebKitWebDriver", []string{"--port=" + strconv.Itoa(port), "--host=local"},
		[]string{"DISPLAY=:" + display, "HOME=" + home, "XDG_RUNTIME_DIR=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
			"DBUS_SESSION_BUS_ADDRESS=" + bus, "GTK_USE_PORTAL=0", "GIO_USE_VFS=local"})
	c := &webdriver{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	for {
		if _, err := c.do(ctx, http.MethodGet, "/status", nil); err == nil {
			break
		}
		if wd.exited() {
			t.Fatalf("WebKitWebDriver exited:\n%s", wd.output())
		}
		select {
		case <-ctx.Done():
			t.Fatalf("WebKitWebDriver did not answer in time:\n%s", wd.output())
		case <-time.After(100 * time.Millisecond):
		}
	}
	raw, err := c.do(ctx, http.MethodPost, "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"webkitgtk:browserOptions": map[string]any{"binary": mini, "args": []string{"--automation"}},
	}}})
	require.NoError(t, err, "starting a WebDriver session in %s", mini)
	var s struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(raw, &s))
	require.NotEmpty(t, s.SessionID)
	c.session = "/session/" + s.SessionID
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = c.do(cctx, http.MethodDelete, c.session, nil)
	})
	return c
}

// privateBus starts a session D-Bus of the test's own, in the test's
// process group (start ends it by PID), and returns its address. Without
// one, WebKitGTK autolaunches a session bus that outlives the test, and on
// a desktop Debian that bus activates xdg-desktop-portal, whose document
// portal mounts a FUSE file system under HOME (HOME/.cache/doc) that the
// test's TempDir cleanup then cannot remove. The bus's configuration names
// no service directory, so it activates nothing: every process on it is
// one the test started.
func privateBus(t *testing.T, ctx context.Context) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "session.conf")
	require.NoError(t, os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=`+dir+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	d := start(t, nil, "dbus-daemon", []string{"--config-file=" + conf, "--nofork", "--nopidfile", "--print-address=3"}, nil, w)
	w.Close()
	addrc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		addrc <- strings.TrimSpace(line)
	}()
	select {
	case addr := <-addrc:
		if addr == "" {
			t.Fatalf("dbus-daemon gave no address:\n%s", d.output())
		}
		return addr
	case <-ctx.Done():
		t.Fatalf("dbus-daemon did not start in time:\n%s", d.output())
		return ""
	}
}

// webdriver is a W3C WebDriver client over plain HTTP.
type webdriver struct {
	base    string
	session string // "/session/ID"
}

// do sends one command and returns its reply's value, or the WebDriver
// error it carries.
func (c *webdriver) do(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var reply struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		return nil, fmt.Errorf("%s %s: HTTP %d, not JSON: %.200s", method, path, resp.StatusCode, b)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(reply.Value, &e)
		return nil, fmt.Errorf("%s %s: HTTP %d: %s: %s", method, path, resp.StatusCode, e.Error, e.Message)
	}
	return reply.Value, nil
}

func (c *webdriver) navigate(ctx context.Context, url string) error {
	_, err := c.do(ctx, http.MethodPost, c.session+"/url", map[string]any{"url": url})
	return err
}

func (c *webdriver) eval(ctx context.Context, expr string) (string, error) {
	raw, err := c.do(ctx, http.MethodPost, c.session+"/execute/sync", map[string]any{"script": "return (" + expr + ");", "args": []any{}})
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s is not a string: %.200s", expr, raw)
	}
	return s, nil
}
