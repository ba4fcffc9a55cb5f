#!/usr/bin/env bash
# make fleet: a redis-server, three relays sharing it (--store redis://…)
# and nginx round-robin in front of them, all on loopback, until Ctrl-C.
#
# Environment (the test in this folder sets them; the defaults suit a
# person): BIN (bin/trickle), PORT (nginx, 8080), RELAY_PORTS ("8081 8082
# 8083"), REDIS_PORT (6390), RELAY_ARGS (more `trickle serve` flags),
# FLEET_DIR (where logs and nginx's files go; a new temporary folder).
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
stop() {
    trap - EXIT INT TERM
    # Only what this script started, by PID.
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
pids+=($!)

n=0
servers=""
for port in $RELAY_PORTS; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # RELAY_ARGS is a list of flags
    "$BIN" serve --addr "127.0.0.1:$port" --store "redis://127.0.0.1:$REDIS_PORT/0" $RELAY_ARGS >"$dir/relay-$n.log" 2>&1 &
    pids+=($!)
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
# Until Ctrl-C, or until any of them exits.
wait -n "${pids[@]}"
echo "fleet: a process exited; stopping the others (logs in $dir)" >&2
