#!/usr/bin/env bash
# make fleet: a redis-server, three relays sharing it (--store redis://…)
# and nginx round-robin in front of them, all on loopback, until Ctrl-C.
#
# Environment (the test in this folder sets them; the defaults suit a
# person): BIN (bin/trickle), PORT (nginx, 8080), RELAY_PORTS ("8081 8082
# 8083"), REDIS_PORT (6390), RELAY_ARGS (more `trickle serve` flags;
# the relays run --max-conns-per-addr 0: every client comes from nginx),
# FLEET_DIR (where logs and nginx's files go; a new temporary folder).
#
# A relay that dies leaves the others serving (nginx passes its share on to
# them), so what the docs say of a dead relay can be watched: kill one by
# the PID in $FLEET_DIR/relay-N.pid. When redis-server or nginx exits, or
# the last relay does, the script stops the rest.
set -euo pipefail
cd "$(dirname "$0")/../.."

BIN=${BIN:-bin/trickle}
PORT=${PORT:-8080}
RELAY_PORTS=${RELAY_PORTS:-8081 8082 8083}
REDIS_PORT=${REDIS_PORT:-6390}
RELAY_ARGS=${RELAY_ARGS:-}
dir=${FLEET_DIR:-$(mktemp -d /tmp/trickle-fleet.XXXXXX)}
mkdir -p "$dir"

for tool in redis-server nginx "$BIN"; do
    command -v "$tool" >/dev/null || { echo "fleet: $tool not found (redis-server and nginx: Debian packages; $BIN: make build)" >&2; exit 1; }
done

pids=()
declare -A relays # PID → "relay N (port P)"
stop() {
    trap - EXIT INT TERM
    # Only what this script started, by PID.
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
pids+=($!)

n=0
servers=""
for port in $RELAY_PORTS; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # RELAY_ARGS is a list of flags
    "$BIN" serve --addr "127.0.0.1:$port" --store "redis://127.0.0.1:$REDIS_PORT/0" --max-conns-per-addr 0 $RELAY_ARGS >"$dir/relay-$n.log" 2>&1 &
    pids+=($!)
    relays[$!]="relay $n (port $port)"
    echo "$!" >"$dir/relay-$n.pid"
    servers+="    server 127.0.0.1:$port;"$'\n'
done

# fleet.conf with this run's ports.
awk -v servers="$servers" -v listen="    listen 127.0.0.1:$PORT;" '
    /^    server 127\.0\.0\.1:808[1-3];$/ { if (!done) { printf "%s", servers; done = 1 } next }
    /^    listen 127\.0\.0\.1:8080;$/ { print listen; next }
    { print }' deploy/fleet/fleet.conf >"$dir/fleet.conf"
user=""
if [ "$(id -u)" = 0 ]; then user="user root root;"; fi
cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
$user
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/client_body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    include $dir/fleet.conf;
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
pids+=($!)

echo "fleet: http://127.0.0.1:$PORT/examples/ — nginx round-robin over relays on ports $RELAY_PORTS, redis on $REDIS_PORT; logs in $dir"
# Until Ctrl-C, or until redis-server, nginx or the last relay exits.
# (wait -n's status is the exited process's: not a reason for set -e.)
live=("${pids[@]}")
while :; do
    done_pid=""
    rc=0
    wait -n -p done_pid "${live[@]}" || rc=$?
    if [ -z "$done_pid" ]; then
        [ "$rc" -ne 127 ] || break # nothing left to wait for
        continue
    fi
    rest=()
    for pid in "${live[@]}"; do [ "$pid" = "$done_pid" ] || rest+=("$pid"); done
    live=("${rest[@]}")
    if [ -n "${relays[$done_pid]:-}" ]; then
        name=${relays[$done_pid]}
        unset "relays[$done_pid]"
        if [ "${#relays[@]}" -gt 0 ]; then
            echo "fleet: $name exited; ${#relays[@]} relays still serve behind nginx (logs in $dir)" >&2
            continue
        fi
        echo "fleet: the last relay exited; stopping the others (logs in $dir)" >&2
    else
        echo "fleet: redis-server or nginx exited; stopping the others (logs in $dir)" >&2
    fi
    break
done
