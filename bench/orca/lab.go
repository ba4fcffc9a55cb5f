package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A Lab is one private desktop session: an X server (Xvfb), a session
// D-Bus, the AT-SPI accessibility bus, speech-dispatcher with the dummy
// output module (nothing is played), Orca writing its debug log, and the
// relay. Every process is started by the lab, in a process group of its
// own, and ended by its id in Close.
type Lab struct {
	Dir         string   // everything of the run: profiles, logs, sockets
	Env         []string // the session's environment, for the programs it starts
	OrcaLog     string   // Orca's debug log (--debug-file)
	Relay       string   // the relay's origin, http://127.0.0.1:PORT
	procs       []*proc
	logOff      int64       // how much of OrcaLog OrcaSaid has read
	logRest     string      // its unfinished last entry
	said        []Utterance // what Orca said, so far
	tty         *lineTTY    // Orca's debug log goes through it, line by line
	orcaLogFile *os.File
	logf        func(string, ...any)
	keepLogs    bool
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// NewLab makes the lab's directory; Close removes it unless keep is set.
func NewLab(keep bool, logf func(string, ...any)) (*Lab, error) {
	dir, err := os.MkdirTemp("", "trickle-orca-")
	if err != nil {
		return nil, err
	}
	l := &Lab{Dir: dir, logf: logf, keepLogs: keep}
	for _, d := range []string{"home", "run", "config/speech-dispatcher", "data", "cache", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	// A session of its own: a fresh home (Orca's settings, the browser's
	// profile), runtime dir (the speech-dispatcher and AT-SPI sockets)
	// and XDG dirs, in UTC so Orca's log clock reads like ours.
	l.Env = append(filteredEnv(), "HOME="+l.path("home"), "XDG_RUNTIME_DIR="+l.path("run"),
		"XDG_CONFIG_HOME="+l.path("config"), "XDG_DATA_HOME="+l.path("data"), "XDG_CACHE_HOME="+l.path("cache"),
		"TZ=UTC", "LANG=C.UTF-8", "ACCESSIBILITY_ENABLED=1")
	l.OrcaLog = l.path("logs/orca-debug.out")
	return l, nil
}

// filteredEnv is this process's environment without what would tie the
// lab to another session (a display, a bus, a runtime dir).
func filteredEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "XDG_RUNTIME_DIR",
			"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "SPEECHD_ADDRESS", "TZ", "LANG", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (l *Lab) path(p string) string { return filepath.Join(l.Dir, p) }

func (l *Lab) setenv(k, v string) { l.Env = append(l.Env, k+"="+v) }

// start runs a program in its own process group with the lab's
// environment, its output to logs/NAME.log (or to out when given).
func (l *Lab) start(name string, out io.Writer, extra []*os.File, prog string, args ...string) (*proc, error) {
	cmd := exec.Command(prog, args...)
	cmd.Env = l.Env
	cmd.Dir = l.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.ExtraFiles = extra
	if out == nil {
		f, err := os.Create(l.path("logs/" + name + ".log"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		out = f
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	l.procs = append(l.procs, p)
	l.logf("started %s (pid %d)", name, cmd.Process.Pid)
	return p, nil
}

// Close ends every process the lab started, the last started first: a
// SIGTERM to its process group (the programs it spawned itself: the
// AT-SPI bus's own dbus-daemon and registry, Chromium's renderers), then
// SIGKILL after 5 s.
func (l *Lab) Close() {
	for i := len(l.procs) - 1; i >= 0; i-- {
		p := l.procs[i]
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
		}
		// Whatever of its group outlived it (a renderer, an activated
		// service) goes with it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		l.logf("ended %s (pid %d)", p.name, pid)
	}
	l.procs = nil
	if l.tty != nil {
		l.tty.Close()
	}
	if l.orcaLogFile != nil {
		l.orcaLogFile.Close()
	}
	if l.keepLogs {
		l.logf("logs kept in %s", l.Dir)
		return
	}
	_ = os.RemoveAll(l.Dir)
}

// readLine reads the first line a program writes to the pipe r (Xvfb's
// -displayfd, dbus-daemon's --print-address), within d.
func readLine(r *os.File, p *proc, d time.Duration) (string, error) {
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case s := <-got:
		if s == "" {
			return "", fmt.Errorf("%s wrote nothing", p.name)
		}
		return s, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited: %v", p.name, p.cmd.ProcessState)
	case <-time.After(d):
		return "", fmt.Errorf("%s said nothing within %v", p.name, d)
	}
}

// until polls ok every 100 ms until it is true, p exits or d passes.
func until(p *proc, d time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(d)
	for !ok() {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before %s: %v", p.name, what, p.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %s within %v", p.name, what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// Xvfb starts an X server on a display it picks itself (-displayfd).
func (l *Lab) Xvfb() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	p, err := l.start("xvfb", nil, []*os.File{w}, "Xvfb", "-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset")
	w.Close()
	if err != nil {
		return err
	}
	n, err := readLine(r, p, 20*time.Second)
	if err != nil {
		return err
	}
	l.setenv("DISPLAY", ":"+n)
	l.logf("display :%s", n)
	return nil
}

// SessionBus starts a private session D-Bus and the settings the
// toolkits read from it: toolkit-accessibility on.
func (l *Lab) SessionBus() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	p, err := l.start("dbus-session", nil, []*os.File{w}, "dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=3")
	w.Close()
	if err != nil {
		return err
	}
	addr, err := readLine(r, p, 20*time.Second)
	if err != nil {
		return err
	}
	l.setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	// gsettings reaches dconf through the session bus (dconf-service is
	// activated by it, and ends with it).
	if out, err := l.run("gsettings", "set", "org.gnome.desktop.interface", "toolkit-accessibility", "true"); err != nil {
		l.logf("gsettings: %v: %s (going on: Chromium is forced with --force-renderer-accessibility)", err, out)
	}
	return nil
}

// run runs a short command with the lab's environment and returns its
// output.
func (l *Lab) run(prog string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = l.Env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// ATSPI starts the accessibility bus (at-spi-bus-launcher, which starts
// its own dbus-daemon and the registry) and waits until it answers on the
// session bus.
func (l *Lab) ATSPI() error {
	launcher := "/usr/libexec/at-spi-bus-launcher"
	if _, err := os.Stat(launcher); err != nil {
		if launcher, err = exec.LookPath("at-spi-bus-launcher"); err != nil {
			return errors.New("at-spi-bus-launcher not found (apt-get install at-spi2-core)")
		}
	}
	p, err := l.start("at-spi", nil, nil, launcher, "--launch-immediately")
	if err != nil {
		return err
	}
	var addr string
	err = until(p, 20*time.Second, "accessibility bus", func() bool {
		out, err := l.run("dbus-send", "--session", "--print-reply=literal", "--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress")
		addr = out
		return err == nil && strings.HasPrefix(out, "unix:")
	})
	if err == nil {
		l.logf("accessibility bus %s", addr)
	}
	return err
}

// Speech starts speech-dispatcher with the dummy output module only, on
// libao's null device: Orca talks to a real speech server and nothing is
// played.
func (l *Lab) Speech() error {
	conf := "LogLevel 3\nAddModule \"dummy\" \"sd_dummy\" \"\"\nDefaultModule dummy\nAudioOutputMethod \"libao\"\n"
	if err := os.WriteFile(l.path("config/speech-dispatcher/speechd.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(l.path("home/.libao"), []byte("default_driver=null\n"), 0o600); err != nil {
		return err
	}
	p, err := l.start("speech-dispatcher", nil, nil, "speech-dispatcher", "--run-single", "--timeout", "0",
		"--config-dir", l.path("config/speech-dispatcher"), "--log-dir", l.path("logs"))
	if err != nil {
		return err
	}
	sock := l.path("run/speech-dispatcher/speechd.sock")
	return until(p, 20*time.Second, "socket "+sock, func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// Orca starts the screen reader with its debug log and waits for its
// first words ("Screen reader on.").
func (l *Lab) Orca() error {
	log, err := os.Create(l.OrcaLog)
	if err != nil {
		return err
	}
	l.orcaLogFile = log
	tty, err := newLineTTY(log)
	if err != nil {
		return err
	}
	l.tty = tty
	p, err := l.start("orca", nil, nil, "orca", "--replace", "--debug-file", tty.Path)
	if err != nil {
		return err
	}
	return until(p, 60*time.Second, "first words in its debug log", func() bool {
		b, _ := os.ReadFile(l.OrcaLog)
		return strings.Contains(string(b), "SPEECH OUTPUT:")
	})
}

// StartRelay starts bin/trickle serve on a free loopback port, letting the
// pages of allowOrigin call its API.
func (l *Lab) StartRelay(bin, allowOrigin string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := l.start("relay", nil, nil, bin, "serve", "--addr", addr, "--allow-origin", allowOrigin)
	if err != nil {
		return err
	}
	l.Relay = "http://" + addr
	return until(p, 30*time.Second, "/healthz", func() bool {
		resp, err := http.Get(l.Relay + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Chromium starts the browser with a window on the lab's display,
// accessibility on and remote debugging, showing url, and returns its
// DevTools URL. The first page is given on the command line: a window
// that opens on about:blank has its keyboard focus in the address bar,
// and a page's own focus() then moves nothing Orca hears.
func (l *Lab) Chromium(exe, url string) (string, error) {
	r, w := io.Pipe()
	log, err := os.Create(l.path("logs/chromium.log"))
	if err != nil {
		return "", err
	}
	p, err := l.start("chromium", w, nil, exe,
		"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps", "--mute-audio",
		"--password-store=basic", "--force-renderer-accessibility",
		"--user-data-dir="+l.path("chromium-profile"), "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-position=0,0", "--window-size=1280,1000", url)
	if err != nil {
		return "", err
	}
	found := make(chan string, 1)
	go func() {
		defer log.Close()
		s := bufio.NewScanner(r)
		for s.Scan() {
			line := s.Text()
			fmt.Fprintln(log, line)
			if ws, ok := strings.CutPrefix(line, "DevTools listening on "); ok {
				select {
				case found <- strings.TrimSpace(ws):
				default:
				}
			}
		}
	}()
	go func() { <-p.done; w.Close() }()
	select {
	case ws := <-found:
		return ws, nil
	case <-p.done:
		return "", fmt.Errorf("chromium exited: %v (logs/chromium.log)", p.cmd.ProcessState)
	case <-time.After(60 * time.Second):
		return "", errors.New("chromium: no DevTools URL within 60s")
	}
}

// HasXKeys reports whether keys can be pressed as the X server's own
// input (xdotool), which Orca hears as a reader's keys. Keys sent through
// the DevTools protocol reach the page only.
func (l *Lab) HasXKeys() bool {
	_, err := exec.LookPath("xdotool")
	return err == nil
}

// PressX presses keys on the lab's display (xdotool key NAME…, 150 ms
// apart: two of Orca's within its double-press time), into the window
// under the pointer: without a window manager the keyboard focus follows
// the pointer, and Chromium's window covers the screen.
func (l *Lab) PressX(keys ...string) error {
	out, err := l.run("xdotool", append([]string{"mousemove", "640", "500", "key", "--clearmodifiers", "--delay", "150"}, keys...)...)
	if err != nil {
		return fmt.Errorf("xdotool key %s: %v: %s", strings.Join(keys, " "), err, out)
	}
	return nil
}

// OrcaSaid returns what Orca has said so far. It reads only what the
// log gained since the last call (at Orca's debug level the log grows by
// megabytes a minute) and keeps the entries up to the last one, which may
// go on over more lines; that one is parsed as it stands.
func (l *Lab) OrcaSaid() []Utterance {
	if f, err := os.Open(l.OrcaLog); err == nil {
		if _, err := f.Seek(l.logOff, io.SeekStart); err == nil {
			b, _ := io.ReadAll(f)
			l.logOff += int64(len(b))
			data := l.logRest + string(b)
			// An entry ends where the next one starts: a line that
			// begins with a timestamp.
			cut := 0
			if locs := entryStart.FindAllStringIndex(data, -1); len(locs) > 0 {
				cut = locs[len(locs)-1][0]
			}
			l.said = append(l.said, ParseOrcaLog(data[:cut], time.Now(), time.UTC)...)
			l.logRest = data[cut:]
		}
		f.Close()
	}
	return append(slices.Clone(l.said), ParseOrcaLog(l.logRest, time.Now(), time.UTC)...)
}

var entryStart = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{6} - `)

// WaitQuiet waits until Orca has said nothing new for quiet (at most max),
// so that what a scenario does next is not mixed with what came before.
func (l *Lab) WaitQuiet(ctx context.Context, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	n, since := len(l.OrcaSaid()), time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if m := len(l.OrcaSaid()); m != n {
			n, since = m, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
	}
}
