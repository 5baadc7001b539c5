#!/usr/bin/env bash
# The scale benchmark (issue 34 point 4): requests and bytes a minute, Prometheus's CPU,
# warroom's CPU and peak memory, for dashboards of 8/50/275/1,000 panels of 1/100/2,000 series
# each, against a real Prometheus holding backfilled synthetic series (see
# benches/support/scale.py). Frame time is the render benchmark's (`cargo bench --bench render`).
#
# Usage: bash benches/scale.sh            (about 8 minutes after the build)
#   SCALE_SETTLE=10 SCALE_WINDOW=20       seconds before measuring, seconds measured
#   SCALE_PANELS=8,50,275,1000 SCALE_WIDTHS=1,100,2000
#   WARROOM=/path/to/warroom              measure that binary instead of building this tree
#   CARGO=cargo                           the cargo to build with (release)
# Needs prometheus, promtool, tmux, curl and python3.
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
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
now=$(date +%s)
python3 benches/support/scale.py --backfill "$tmp/series.om" --now "$now"
promtool tsdb create-blocks-from openmetrics "$tmp/series.om" "$tmp/data" >/dev/null
rm "$tmp/series.om"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 15s\n' >"$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$port" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null || { echo "benches/scale.sh: Prometheus did not start" >&2; tail "$tmp/prometheus.log" >&2; exit 1; }
echo "warroom $("$WARROOM" --version | awk '{print $2}') ($(git rev-parse --short HEAD 2>/dev/null || echo '?')), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores; Prometheus $(prometheus --version 2>&1 | awk 'NR==1{print $3}'); tmux 160x48, refresh 5 s, range 1 h"
echo
python3 benches/support/scale.py --port "$port" --prom-pid "$prom_pid" --warroom "$WARROOM" \
  --workdir "$tmp" --settle "${SCALE_SETTLE:-10}" --window "${SCALE_WINDOW:-20}" \
  --panels "${SCALE_PANELS:-8,50,275,1000}" --widths "${SCALE_WIDTHS:-1,100,2000}"
