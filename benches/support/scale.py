#!/usr/bin/env python3
"""The scale benchmark (issue 34 point 4), run by benches/scale.sh.

One real Prometheus holds synthetic series backfilled with `promtool tsdb create-blocks-from
openmetrics`: `scale_w1` (1 series), `scale_w100` (100) and `scale_w2000` (2,000), a sample each
15 s from an hour ago to half an hour ahead. For each dashboard size (8, 50, 275, 1,000 panels)
and panel width (1, 100, 2,000 series) warroom opens a dashboard of that many panels, each
`scale_wS + 0 * i` (distinct queries, the same series), refresh 5 s, range 1 h, in tmux at
160x48. After SETTLE seconds (the first full fetch) it is measured for WINDOW seconds:
requests and response bytes from Prometheus's own counters (`/api/v1/query` and
`/api/v1/query_range`), Prometheus's and warroom's CPU (/proc/PID/stat), then warroom's peak
resident memory (VmHWM). Prints one markdown table.
"""

import argparse
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

WIDTHS = (1, 100, 2000)
TICK = os.sysconf("SC_CLK_TCK")


def backfill(path, now):
    """The OpenMetrics file: every width's series, an hour back and half an hour ahead."""
    start, end = now - 3600, now + 1800
    with open(path, "w") as f:
        for w in WIDTHS:
            f.write(f"# TYPE scale_w{w} gauge\n")
            for k in range(w):
                base = (k % 97) / 100.0
                for t in range(start - start % 15, end, 15):
                    v = base + ((t // 15) % 20) / 1000.0
                    f.write(f'scale_w{w}{{pod="pod-{k}"}} {v} {t}\n')
        f.write("# EOF\n")


def metric(port, query):
    """The sum of an instant query's values on Prometheus (its own counters)."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as r:
        import json

        data = json.load(r)["data"]["result"]
    return sum(float(x["value"][1]) for x in data)


def counters(port):
    """Requests and response bytes of the query APIs so far, read off /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    req = size = 0.0
    for line in text.splitlines():
        if 'handler="/api/v1/query' not in line:
            continue
        if line.startswith("prometheus_http_requests_total"):
            req += float(line.rsplit(" ", 1)[1])
        elif line.startswith("prometheus_http_response_size_bytes_sum"):
            size += float(line.rsplit(" ", 1)[1])
    return req, size


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def config(path, panels, width):
    with open(path, "w") as f:
        f.write('refresh = "5s"\nrange = "1h"\n')
        for i in range(panels):
            f.write(
                f'\n[[panel]]\ntitle = "w{width} #{i}"\nquery = "scale_w{width} + 0 * {i}"\n'
                "warn = 0.9\ncrit = 0.95\n"
            )


def console_pid(sock):
    out = subprocess.run(
        ["tmux", "-S", sock, "display", "-p", "#{pane_pid}"], capture_output=True, text=True
    ).stdout.strip()
    shell = int(out)
    for _ in range(100):
        try:
            with open(f"/proc/{shell}/task/{shell}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.05)
    return shell


def one(args, panels, width):
    work = os.path.join(args.workdir, f"p{panels}w{width}")
    os.makedirs(work, exist_ok=True)
    cfg = os.path.join(work, "warroom.toml")
    config(cfg, panels, width)
    sock = os.path.join(work, "tmux.sock")
    cmd = (
        f"NO_COLOR=1 {args.warroom} --config {cfg} --data-dir {work}/data "
        f"--log-file {work}/w.log open --prometheus http://127.0.0.1:{args.port}"
    )
    subprocess.run(
        ["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "48", cmd],
        check=True,
    )
    try:
        pid = console_pid(sock)
        time.sleep(args.settle)
        r0, b0 = counters(args.port)
        p0, w0, t0 = cpu_s(args.prom_pid), cpu_s(pid), time.monotonic()
        time.sleep(args.window)
        r1, b1 = counters(args.port)
        p1, w1, t1 = cpu_s(args.prom_pid), cpu_s(pid), time.monotonic()
        peak = peak_mib(pid)
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
    span = t1 - t0
    # Reading /metrics is not counted (its handler is /metrics).
    return {
        "req_min": (r1 - r0) * 60 / span,
        "kib_min": (b1 - b0) * 60 / span / 1024,
        "prom_cpu": 100 * (p1 - p0) / span,
        "war_cpu": 100 * (w1 - w0) / span,
        "peak": peak,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backfill", help="write the OpenMetrics file here and stop")
    ap.add_argument("--now", type=int)
    ap.add_argument("--port", type=int)
    ap.add_argument("--prom-pid", type=int)
    ap.add_argument("--warroom")
    ap.add_argument("--workdir")
    ap.add_argument("--settle", type=float, default=10)
    ap.add_argument("--window", type=float, default=20)
    ap.add_argument("--panels", default="8,50,275,1000")
    ap.add_argument("--widths", default="1,100,2000")
    args = ap.parse_args()
    if args.backfill:
        backfill(args.backfill, args.now)
        return
    print("| panels | series a panel | requests/min | KiB/min | Prometheus CPU | warroom CPU | warroom peak |")
    print("|---|---|---|---|---|---|---|")
    for w in (int(x) for x in args.widths.split(",")):
        for n in (int(x) for x in args.panels.split(",")):
            r = one(args, n, w)
            print(
                f"| {n} | {w} | {r['req_min']:.0f} | {r['kib_min']:.0f} | {r['prom_cpu']:.1f} % "
                f"| {r['war_cpu']:.1f} % | {r['peak']:.1f} MiB |",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
