#!/usr/bin/env bash
# The lab check with a real screen reader (not part of make test, nor of
# make bench: it is no benchmark, so it is not a bench/*/run.sh): Orca on
# a private X display, session bus and AT-SPI bus, speech-dispatcher's
# dummy output module, Chromium with a window and accessibility on, the
# relay on loopback. It prints what Orca said while the widget streamed an
# answer on the answer page and in a <trickle-chat>, two turns and a
# stopped one (and a control the checks must catch), and while a stored
# six-turn thread was walked by keyboard, each with ariaNotify on and off,
# and exits 1 when an expectation fails (docs/testing.md#orca). About four
# minutes.
#
#   bench/orca/lab.sh                    every scenario (answer, chat, stop, control, walk), ariaNotify on then off
#   bench/orca/lab.sh -scenarios chat    one of them
#   bench/orca/lab.sh -scenarios walk-browse -arianotify on
#                                        the walk in Orca's browse mode (fails: docs/notes/orca.md)
#   bench/orca/lab.sh -keep -v           keep Orca's debug log and every program's log,
#                                        say what the lab starts and ends
#
# Debian packages: orca at-spi2-core dbus-daemon dbus-bin xvfb
# speech-dispatcher libglib2.0-bin dconf-gsettings-backend chromium, and
# xdotool for key presses Orca hears (without it the keys go to the page
# over DevTools).
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
for tool in orca Xvfb dbus-daemon dbus-send speech-dispatcher; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -x /usr/libexec/at-spi-bus-launcher ] || command -v at-spi-bus-launcher >/dev/null || missing+=(at-spi-bus-launcher)
if [ ${#missing[@]} -gt 0 ]; then
  echo "orca lab: missing ${missing[*]}" >&2
  echo "install: apt-get install -y --no-install-recommends orca at-spi2-core dbus-daemon dbus-bin xvfb speech-dispatcher libglib2.0-bin dconf-gsettings-backend chromium xdotool" >&2
  exit 2
fi

make --no-print-directory build >/dev/null
mkdir -p bench/results
go build -o bench/results/.orca-lab ./bench/orca
# One lab at a time on a machine: two Orcas would not fight over a
# display or a bus (each lab has its own), but both load the same CPUs.
exec flock /tmp/trickle-orca.lock bench/results/.orca-lab "$@"
