#!/usr/bin/env bash
# warroom beside its closest peer, grafatui (same ratatui/tokio stack), in one run (issue 20):
# one real Prometheus holding a backfilled hour of `warroom sim serve planner-peak` (and scraping
# it live every 5 s), the same 8 queries (warroom's default dashboard), 1 h range, 5 s refresh,
# both in tmux at 200x60, interleaved rounds, medians, the table with ratios.
#
# Usage: bash benches/peers.sh            (about 4 minutes after the builds)
#   PEERS_ROUNDS=3 PEERS_SETTLE=6 PEERS_WINDOW=12   rounds, seconds before measuring, seconds
#                                           of each measuring window (two per round)
#   PEERS_STARTS=4                          short starts per console and round, timed to the
#                                           first frame (the figure is their median with the
#                                           round's own start)
#   GRAFATUI=/path/to/grafatui              else `grafatui` on PATH, else installed with
#                                           `cargo install grafatui --version 0.1.18 --root
#                                           target/peers/grafatui` (crates.io, a few minutes)
#   CARGO=lcargo                            the cargo to build with
#   WARROOM=/path/to/warroom                measure that binary instead of building this tree
#   PEERS_WARROOM_ENV='{"TOKIO_WORKER_THREADS":"1"}'   more environment for warroom only (JSON)
#   PEERS_BESIDE=/path/to/warroom           measure beside that warroom (an earlier build, the
#                                           same config) instead of grafatui: before and after
#                                           in one run
# Needs prometheus, promtool, tmux, strace, curl and python3. The raw rounds are left in
# target/peers/rounds.json.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
ROUNDS=${PEERS_ROUNDS:-3}
SETTLE=${PEERS_SETTLE:-6}
WINDOW=${PEERS_WINDOW:-12}
STARTS=${PEERS_STARTS:-4}
warroom_env=${PEERS_WARROOM_ENV:-'{}'}
GRAFATUI_VERSION=0.1.18
for tool in prometheus promtool tmux strace curl python3; do
  command -v "$tool" >/dev/null || { echo "benches/peers.sh: $tool is not installed" >&2; exit 1; }
done
started=$SECONDS
if [ -z "${WARROOM:-}" ]; then
  "$CARGO" build -q --release --bin warroom
  WARROOM=$PWD/target/release/warroom
fi
# The backfill in a debug build: an example links the dev-dependencies, which a test build has
# already compiled (in release they would be compiled again, with LTO).
BACKFILL=${BACKFILL:-$PWD/target/debug/examples/peers_backfill}
if [ ! -x "$BACKFILL" ]; then
  "$CARGO" build -q --example peers_backfill
fi
GRAFATUI=${GRAFATUI:-$(command -v grafatui || true)}
if [ -n "${PEERS_BESIDE:-}" ]; then
  GRAFATUI=$PEERS_BESIDE
elif [ -z "$GRAFATUI" ]; then
  root=$PWD/target/peers/grafatui
  if [ ! -x "$root/bin/grafatui" ]; then
    echo "benches/peers.sh: installing grafatui $GRAFATUI_VERSION into $root" >&2
    "$CARGO" install -q grafatui --version "$GRAFATUI_VERSION" --locked --root "$root"
  fi
  GRAFATUI=$root/bin/grafatui
fi
built=$SECONDS

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The simulator, live, one simulated hour in: the backfilled hour ends where it starts.
sim_port=$(free_port)
"$WARROOM" --log-file "$tmp/sim.log" sim serve planner-peak --listen "127.0.0.1:$sim_port" \
  --start-at 3600 --data-dir "$tmp/simdata" >/dev/null 2>&1 &
pids+=($!)
end=$(( $(date +%s) - 30 ))
"$BACKFILL" "$tmp/hour.om" "$end" "127.0.0.1:$sim_port"
promtool tsdb create-blocks-from openmetrics "$tmp/hour.om" "$tmp/data" >/dev/null
prom_port=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 5s
scrape_configs:
  - job_name: sim
    static_configs:
      - targets: ["127.0.0.1:$sim_port"]
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
pids+=($prom_pid)
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null || { echo "benches/peers.sh: Prometheus did not start" >&2; tail "$tmp/prometheus.log" >&2; exit 1; }
# Two scrapes of the live simulator, so the newest points exist too.
sleep 10

# The 8 queries of warroom's default dashboard (the sim preset), for both.
preset=src/metrics/presets/sim.toml
mapfile -t queries < <(python3 - "$preset" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    for p in tomllib.load(f)["panel"]:
        print(p["query"])
EOF
)
[ ${#queries[@]} -eq 8 ] || { echo "benches/peers.sh: expected 8 queries in $preset, found ${#queries[@]}" >&2; exit 1; }
# warroom: the same panels written as [[panel]] (a console on a real Prometheus without them
# would build its dashboard by discovery).
python3 benches/support/panels_toml.py "$preset" "$tmp/warroom.toml"
warroom_argv=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' \
  "$WARROOM" --config "$tmp/warroom.toml" --log-file "$tmp/warroom.log" --data-dir "$tmp/wdata" \
  open --prometheus "{URL}")
peer_name=grafatui
if [ -n "${PEERS_BESIDE:-}" ]; then
  peer_name=before
  peer_args=("$PEERS_BESIDE" --config "$tmp/warroom.toml" --log-file "$tmp/before.log" \
    --data-dir "$tmp/wdata-before" open --prometheus "{URL}")
else
  peer_args=("$GRAFATUI" --prometheus-url "{URL}" --range 1h --refresh-rate 5000)
  for q in "${queries[@]}"; do peer_args+=(--query "$q"); done
fi
peer_argv=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${peer_args[@]}")
mkdir -p "$tmp/home" target/peers
envs=$(python3 -c 'import json,sys; h=sys.argv[1]; print(json.dumps({"HOME": h, "XDG_CONFIG_HOME": h+"/.config", "XDG_DATA_HOME": h+"/.local/share", "XDG_STATE_HOME": h+"/.local/state"}))' "$tmp/home")

echo "warroom $("$WARROOM" --version | awk '{print $2}') ($(git rev-parse --short HEAD 2>/dev/null || echo '?')) beside $peer_name $("$GRAFATUI" --version 2>/dev/null | awk '{print $2}'), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -sr)"
echo "Prometheus $(prometheus --version 2>&1 | awk 'NR==1{print $3}'), a backfilled hour of planner-peak plus live scrapes every 5 s; 8 queries, 1 h range, 5 s refresh; tmux 200x60; $ROUNDS interleaved rounds, ${SETTLE}s settle then two ${WINDOW}s windows (one untraced, one under strace); first frame: median of $((STARTS + 1)) starts a round"
echo
python3 benches/support/peers.py --prometheus-port "$prom_port" --prometheus-pid "$prom_pid" \
  --warroom "$warroom_argv" --warroom-env "$warroom_env" --peer "$peer_argv" --peer-name "$peer_name" --env "$envs" \
  --rounds "$ROUNDS" --settle "$SETTLE" --window "$WINDOW" --starts "$STARTS" --workdir "$tmp" \
  --json target/peers/rounds.json
echo
echo "Build $((built - started))s; benchmark $((SECONDS - built))s."
