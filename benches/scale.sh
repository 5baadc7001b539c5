#!/usr/bin/env bash
# The scale benchmark (issue 34 point 4): requests and bytes a minute, Prometheus's CPU,
# warroom's CPU and peak memory, for dashboards of 8/50/275/1,000 panels of 1/100/2,000 series
# each, against a real Prometheus holding backfilled synthetic series (see
# benches/support/scale.py). Frame time is the render benchmark's (`cargo bench --bench render`).
# Then issue 34's first figure: node-exporter-full (tests/fixtures/grafana/community/) imported
# with `warroom import grafana FILE --toml` and opened at 160x48, against a real
# prometheus-node-exporter on loopback scraped by a second Prometheus (so $job, $nodename and
# $node resolve and its queries read real series): (a) its idle requests a minute, (b) those
# of the panels on screen alone, (c) what Grafana sends for the same view, counted from the
# dashboard.
#
# Usage: bash benches/scale.sh            (about 17 minutes after the build)
#   SCALE_SETTLE=10 SCALE_WINDOW=30       seconds before measuring, seconds measured
#   SCALE_PANELS=8,50,275,1000 SCALE_WIDTHS=1,100,2000
#   SCALE_NODE_SETTLE=30 SCALE_NODE_WINDOW=180
#                                         node-exporter-full: its panels refresh once a
#                                         minute, so the window is whole minutes
#   SCALE_NODE=0 / SCALE_TABLE=0          skip node-exporter-full / the table
#   WARROOM=/path/to/warroom              measure that binary instead of building this tree
#   WARROOM_COMMIT=abc1234                the commit that binary was built from (for the header)
#   CARGO=cargo                           the cargo to build with (release)
# Needs prometheus, promtool, tmux, curl and python3; prometheus-node-exporter for the last case.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in prometheus promtool tmux curl python3; do
  command -v "$tool" >/dev/null || { echo "benches/scale.sh: $tool is not installed" >&2; exit 1; }
done
if [ -z "${WARROOM:-}" ]; then
  "${CARGO:-cargo}" build -q --release --bin warroom
  WARROOM=$PWD/target/release/warroom
fi
tmp=$(mktemp -d)
prom_pid=
node_pid=
cleanup() {
  [ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null || true
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
now=$(date +%s)
python3 benches/support/scale.py --backfill "$tmp/series.om" --now "$now"
promtool tsdb create-blocks-from openmetrics "$tmp/series.om" "$tmp/data" >/dev/null
rm "$tmp/series.om"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
# Its query log splits each case's requests by kind, with Prometheus's time on each.
printf 'global:\n  scrape_interval: 15s\n  query_log_file: %s\n' "$tmp/scale-query.log" >"$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$port" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null || { echo "benches/scale.sh: Prometheus did not start" >&2; tail "$tmp/prometheus.log" >&2; exit 1; }
echo "warroom $("$WARROOM" --version | awk '{print $2}') (${WARROOM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores; Prometheus $(prometheus --version 2>&1 | awk 'NR==1{print $3}'); tmux 160x48, refresh 5 s, range 1 h"
echo
[ "${SCALE_TABLE:-1}" = 0 ] || python3 benches/support/scale.py --port "$port" --prom-pid "$prom_pid" --warroom "$WARROOM" \
  --workdir "$tmp" --settle "${SCALE_SETTLE:-10}" --window "${SCALE_WINDOW:-30}" \
  --panels "${SCALE_PANELS:-8,50,275,1000}" --widths "${SCALE_WIDTHS:-1,100,2000}" \
  --query-log "$tmp/scale-query.log"

# node-exporter-full, on a second Prometheus that scrapes a real node exporter (the first one's
# backfilled blocks reach half an hour ahead, so its head refuses live samples as too old). Both
# start only now, so they cost nothing in the table above.
[ "${SCALE_NODE:-1}" = 0 ] && exit 0
command -v prometheus-node-exporter >/dev/null || { echo "benches/scale.sh: prometheus-node-exporter is not installed (SCALE_NODE=0 skips node-exporter-full)" >&2; exit 1; }
kill "$prom_pid" 2>/dev/null || true
wait "$prom_pid" 2>/dev/null || true
prom_pid=
node_port=$(free_port)
mkdir -p "$tmp/textfile"
prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" \
  --collector.textfile.directory="$tmp/textfile" >"$tmp/node-exporter.log" 2>&1 &
node_pid=$!
port=$(free_port)
# Its query log tells the dashboard's queries from the others in the counts.
printf 'global:\n  scrape_interval: 15s\n  query_log_file: %s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
  "$tmp/query.log" "$node_port" >"$tmp/node-prometheus.yml"
prometheus --config.file="$tmp/node-prometheus.yml" --storage.tsdb.path="$tmp/node-data" \
  --web.listen-address="127.0.0.1:$port" >"$tmp/node-prometheus.log" 2>&1 &
prom_pid=$!
# Four scrapes (45 s) before opening: the dashboard's rates need two samples in their window.
samples=0
for _ in $(seq 1 60); do
  samples=$(curl -sf "http://127.0.0.1:$port/api/v1/query" \
    --data-urlencode 'query=count_over_time(up{job="node"}[5m])' |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)' 2>/dev/null) || samples=0
  [ "$samples" -ge 4 ] && break
  sleep 5
done
[ "$samples" -ge 4 ] || { echo "benches/scale.sh: Prometheus did not scrape the node exporter" >&2; tail "$tmp/node-exporter.log" "$tmp/node-prometheus.log" >&2; exit 1; }
python3 benches/support/scale.py --port "$port" --prom-pid "$prom_pid" --warroom "$WARROOM" \
  --workdir "$tmp" --node-full tests/fixtures/grafana/community/node-exporter-full.json \
  --node-settle "${SCALE_NODE_SETTLE:-30}" --node-window "${SCALE_NODE_WINDOW:-180}" \
  --query-log "$tmp/query.log"
