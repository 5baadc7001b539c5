#!/usr/bin/env bash
# Every benchmark, one table: the figure, its target, and whether it holds.
# Usage: bash benches/all.sh [BENCH...]     (default: all of them; about 7 minutes after the build)
# Needs prometheus, promtool and tmux for the console, demo, embedded and fetch benchmarks;
# prometheus for discover (discovery among 5,000 names: requests, bytes, time to a dashboard).
# `responders` (issue 18: a note through the holder, a follower's delay, the holder's frames under 4
# writers) needs nothing more: its holder and follower run in-process over a real unix socket.
# `journey` is the end-to-end test (tests/console/journey_tmux.rs: Prometheus, Alertmanager, tmux, a
# debug build): the console's CPU seconds, peak memory and requests to Prometheus over a whole
# incident, from its FIGURE lines.
set -uo pipefail
cd "$(dirname "$0")/.."
benches=("$@")
if [ ${#benches[@]} -eq 0 ]; then
  benches=($(sed -n 's/^name = "\(.*\)"$/\1/p' <(sed -n '/^\[\[bench\]\]/,/^$/p' Cargo.toml)) journey)
fi
out=$(mktemp)
shipped=$(mktemp -d)
trap 'rm -rf "$out" "$shipped"' EXIT
started=$SECONDS
cargo bench --no-run >/dev/null 2>&1 || { echo "benches/all.sh: the benchmarks do not build; run cargo bench --no-run" >&2; exit 1; }
# The benchmarks of the process (console, demo) run the binary that ships, not the bench
# profile's (which has no LTO). Each `cargo bench` links the bench profile's binary over
# target/release/warroom again (18 MB of code against 12.6), so they run a copy made here.
cargo build --release -q 2>/dev/null || { echo "benches/all.sh: the release build failed; run cargo build --release" >&2; exit 1; }
cp target/release/warroom "$shipped/warroom"
export WARROOM_BIN="$shipped/warroom"
built=$SECONDS
timing=()
# Each line to the terminal and down the pipe. Not `tee /dev/stderr`: that opens the file again,
# and when stderr is a file (`2>log`) the reopening truncates it, so the log kept the last bench.
show() {
  local line
  while IFS= read -r line; do
    printf '%s\n' "$line" >&2
    printf '%s\n' "$line"
  done
}
run_one() {
  local b=$1
  if [ "$b" = journey ]; then
    local log
    log=$(mktemp)
    if ! cargo test -q --test console journey_tmux::journey_against_prometheus -- --nocapture >"$log" 2>&1; then
      echo "benches/all.sh: the journey test FAILED; its figures are left out. The end of its output:" >&2
      tail -40 "$log" >&2
    else
      grep -P '^figure\t' "$log" | show | sed "s/^/$b\t/" >>"$out"
      grep -qP '^figure\t' "$log" || echo "benches/all.sh: the journey test printed no figures" >&2
    fi
    rm -f "$log"
    return
  fi
  local before
  before=$(wc -l <"$out")
  cargo bench -q --bench "$b" 2>/dev/null | show | grep -P '^figure\t' | sed "s/^/$b\t/" >>"$out"
  if [ "$(wc -l <"$out")" -eq "$before" ]; then
    echo "benches/all.sh: $b printed no figures (run cargo bench --bench $b to see why)" >&2
  fi
}
for b in "${benches[@]}"; do
  echo "== $b" >&2
  t0=$SECONDS
  run_one "$b"
  timing+=("$b $((SECONDS - t0))s")
done
echo
echo "| bench | figure | measured | target | holds |"
echo "|---|---|---|---|---|"
awk -F'\t' '{
  bench=$1; name=$3; v=$4+0; unit=$5; t=$6; holds="-"
  if (t ~ /^< /)  { n=substr(t,3)+0; holds=(v <  n) ? "yes" : "NO" }
  if (t ~ /^>= /) { n=substr(t,4)+0; holds=(v >= n) ? "yes" : "NO" }
  printf "| %s | %s | %s %s | %s | %s |\n", bench, name, $4, unit, (t=="-" ? "-" : t " " unit), holds
}' "$out"
echo
echo "Build $((built - started))s; then ${timing[*]}; benchmarks $((SECONDS - built))s, all $((SECONDS - started))s."
