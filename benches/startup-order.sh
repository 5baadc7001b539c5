#!/usr/bin/env bash
# Writes benches/support/startup-order.txt: the functions an idle console runs, in the order the
# linker is to lay them out first in the release binary (src/build.rs passes the file to lld,
# issue 20, when the build asks for it with WARROOM_SYMBOL_ORDER=1).
#
# The kernel maps a binary's code 64 KiB at a time around each page touched (fault-around), so
# a console that runs 1.9 MB of its 9.2 MB of code, scattered, kept 7.6 MiB of it resident and
# took a page fault for each window. Laid out together, the same code is about 2 MiB.
#
# The functions are those valgrind's callgrind sees the release binary run, in tmux at 200x60:
# a console discovering its dashboard on a real Prometheus that scrapes the simulator, one with
# the default dashboard's eight panels, and one with nothing listening, about a minute each.
# Run it again after a toolchain or dependency update (the names carry hashes that change then):
# a stale list costs nothing but its benefit; `cargo bench --bench console` reports the code
# pages resident.
#
# Usage: bash benches/startup-order.sh     (about 5 minutes after the build)
#   WARROOM=/path/to/warroom   trace that binary instead of building this tree
#   CARGO=lcargo               the cargo to build with
# Then build with the list:  WARROOM_SYMBOL_ORDER=1 cargo build --release
# (without the variable, or where benches/ is not shipped, the release binary is not ordered).
# Needs valgrind, prometheus, tmux, curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
for tool in valgrind prometheus tmux curl python3 nm; do
  command -v "$tool" >/dev/null || { echo "benches/startup-order.sh: $tool is not installed" >&2; exit 1; }
done
if [ -z "${WARROOM:-}" ]; then
  "$CARGO" build -q --release --bin warroom
  WARROOM=$PWD/target/release/warroom
fi
tmp=$(mktemp -d)
pids=()
session=warroom-order-$$
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

sim_port=$(free_port)
"$WARROOM" --log-file "$tmp/sim.log" sim serve planner-peak --listen "127.0.0.1:$sim_port" \
  --data-dir "$tmp/simdata" >/dev/null 2>&1 &
pids+=($!)
prom_port=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 2s
scrape_configs:
  - job_name: sim
    static_configs:
      - targets: ["127.0.0.1:$sim_port"]
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null || { echo "benches/startup-order.sh: Prometheus did not start" >&2; exit 1; }
sleep 8 # a few scrapes, so the panels have points

printf 'refresh = "5s"\n' >"$tmp/discover.toml"
python3 benches/support/panels_toml.py src/metrics/presets/sim.toml "$tmp/panels.toml"
closed=$(free_port)

# One console under callgrind for SECS seconds, then quit; its trace in $tmp/NAME.cg.
trace() {
  local name=$1 config=$2 url=$3 secs=$4
  echo "benches/startup-order.sh: tracing $name (${secs}s)" >&2
  tmux kill-session -t "$session" 2>/dev/null || true
  HOME=$tmp/home tmux new-session -d -s "$session" -x 200 -y 60 \
    "valgrind --tool=callgrind --demangle=no --callgrind-out-file=$tmp/$name.cg $WARROOM --config $config --log-file $tmp/$name.log --data-dir $tmp/$name.data open --prometheus $url 2>$tmp/$name.vg"
  sleep "$secs"
  tmux send-keys -t "$session" q
  for _ in $(seq 1 300); do
    tmux has-session -t "$session" 2>/dev/null || break
    sleep 0.2
  done
  [ -s "$tmp/$name.cg" ] || { echo "benches/startup-order.sh: no trace for $name" >&2; tail "$tmp/$name.vg" >&2; exit 1; }
}
mkdir -p "$tmp/home"
trace discover "$tmp/discover.toml" "http://127.0.0.1:$prom_port" 60
trace panels "$tmp/panels.toml" "http://127.0.0.1:$prom_port" 60
trace nothing "$tmp/discover.toml" "http://127.0.0.1:$closed" 30

nm --defined-only "$WARROOM" | awk '$2 ~ /^[tTwW]$/ {print $3}' >"$tmp/symbols"
python3 - "$tmp/symbols" benches/support/startup-order.txt "$tmp/discover.cg" "$tmp/panels.cg" "$tmp/nothing.cg" <<'EOF'
import re, sys
symbols = set(open(sys.argv[1]).read().split())
seen, order = set(), []
for trace in sys.argv[3:]:
    for line in open(trace):
        m = re.match(r"c?fn=\(\d+\) (\S+)$", line)
        if m and m.group(1) in symbols and m.group(1) not in seen:
            seen.add(m.group(1))
            order.append(m.group(1))
with open(sys.argv[2], "w") as f:
    f.write("# The functions an idle console runs, laid out first in the release binary (src/build.rs,\n")
    f.write("# with WARROOM_SYMBOL_ORDER=1).\n")
    f.write("# Written by benches/startup-order.sh; do not edit.\n")
    f.write("\n".join(order) + "\n")
print(f"benches/startup-order.sh: {len(order)} functions in benches/support/startup-order.txt", file=sys.stderr)
EOF
