#!/usr/bin/env python3
"""The scale benchmark (issue 34 point 4), run by benches/scale.sh.

One real Prometheus holds synthetic series backfilled with `promtool tsdb create-blocks-from
openmetrics`: `scale_w1` (1 series), `scale_w100` (100) and `scale_w2000` (2,000), a sample each
15 s from an hour ago to half an hour ahead. For each dashboard size (8, 50, 275, 1,000 panels)
and panel width (1, 100, 2,000 series) warroom opens a dashboard of that many panels, each
`scale_wS + 0 * i` (distinct queries, the same series), refresh 5 s, range 1 h, in tmux at
160x48. After SETTLE seconds (the first full fetch) it is measured for WINDOW seconds (30: a
whole number of the 5 s refreshes and of the 30 s reads of hidden panels and runbook advice):
requests and response bytes from Prometheus's own counters (`/api/v1/query` and
`/api/v1/query_range`), Prometheus's and warroom's CPU (/proc/PID/stat), then warroom's peak
resident memory (VmHWM). Prints one markdown table, then (from Prometheus's query log) each
case's requests by kind with the time Prometheus spent executing them.

Then, with `--node-full FILE` (a Grafana dashboard, node-exporter-full; scale.sh runs a real
prometheus-node-exporter on loopback, scraped by a second Prometheus, so the dashboard's
variables $job, $nodename and $node resolve and its queries read real series), issue 34's
first figure: the dashboard imported with the real binary (`warroom import grafana FILE --toml`,
variables left as [[variable]] entries for the console to resolve), opened as is at 160x48 and
measured idle over whole minutes (the panels keep the dashboard's refresh, `every = "1m"`, so
a window of N minutes holds N refreshes): (a) the imported dashboard as is; (b) the panels on
screen alone: a config holding only the [[panel]] entries whose titles the console drew in (a)
(read off the tmux pane), with the same variables and `every`; (c) what Grafana sends for the
same view, counted from the JSON: the panels of the open rows whose top is inside a
1920x1080 browser view (VIEW_ROWS grid rows, see `grafana_view`), times their Prometheus
targets that are not hidden (an instant-and-range target counts two, an exemplar query one
more), per the dashboard's refresh. Prints the three with a/b and a/c.
"""

import argparse
import json
import os
import re
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
        data = json.load(r)["data"]["result"]
    return sum(float(x["value"][1]) for x in data)


def counters(port, by_handler=False):
    """Requests and response bytes of the query APIs so far, read off /metrics; with
    `by_handler`, also every /api/v1 handler's requests (label look-ups included)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    req = size = 0.0
    handlers = {}
    for line in text.splitlines():
        if line.startswith("prometheus_http_requests_total") and 'handler="/api/v1/' in line:
            h = re.search(r'handler="([^"]*)"', line).group(1)
            handlers[h] = handlers.get(h, 0.0) + float(line.rsplit(" ", 1)[1])
        if 'handler="/api/v1/query' not in line or "query_exemplars" in line:
            continue
        if line.startswith("prometheus_http_requests_total"):
            req += float(line.rsplit(" ", 1)[1])
        elif line.startswith("prometheus_http_response_size_bytes_sum"):
            size += float(line.rsplit(" ", 1)[1])
    if by_handler:
        return req, size, handlers
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
    return measure(args, work, cfg, args.settle, args.window)


def measure(args, work, cfg, settle, window, capture=False, mine="scale_w"):
    """Open warroom on `cfg` in tmux at 160x48; after `settle` seconds measure `window`
    seconds. With `capture`, the pane's text at the end of the window is returned too."""
    os.makedirs(work, exist_ok=True)
    sock = os.path.join(work, "tmux.sock")
    cmd = (
        f"NO_COLOR=1 {args.warroom} --config {cfg} --data-dir {work}/data "
        f"--log-file {work}/w.log open --prometheus http://127.0.0.1:{args.port}"
    )
    subprocess.run(
        ["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "48", cmd],
        check=True,
    )
    pane = ""
    try:
        pid = console_pid(sock)
        time.sleep(settle)
        r0, b0, h0 = counters(args.port, by_handler=True)
        p0, w0, t0, wall0 = cpu_s(args.prom_pid), cpu_s(pid), time.monotonic(), time.time()
        time.sleep(window)
        r1, b1, h1 = counters(args.port, by_handler=True)
        p1, w1, t1, wall1 = cpu_s(args.prom_pid), cpu_s(pid), time.monotonic(), time.time()
        peak = peak_mib(pid)
        if capture:
            pane = subprocess.run(
                ["tmux", "-S", sock, "capture-pane", "-p", "-t", "0"],
                capture_output=True,
                text=True,
            ).stdout
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
    span = t1 - t0
    kinds, empty = logged(args.query_log, (wall0, wall1), mine)
    # Reading /metrics is not counted (its handler is /metrics).
    return {
        "kinds": kinds,
        "empty": empty,
        "req_min": (r1 - r0) * 60 / span,
        "kib_min": (b1 - b0) * 60 / span / 1024,
        "prom_cpu": 100 * (p1 - p0) / span,
        "war_cpu": 100 * (w1 - w0) / span,
        "peak": peak,
        "by_handler": {
            h: (h1[h] - h0.get(h, 0.0)) * 60 / span for h in h1 if h1[h] - h0.get(h, 0.0) > 0
        },
        "pane": pane,
        "wall": (wall0, wall1),
    }


# --- node-exporter-full (issue 34's first figure) -------------------------------------------

# Grafana's grid: a unit is 30 px high with an 8 px gap (GRID_CELL_HEIGHT, GRID_CELL_VMARGIN).
# A 1920x1080 screen leaves about 840 px of dashboard under the browser's bars (~110 px),
# Grafana's top bar (~80 px) and the variables bar (~50 px): 840 / 38 = 22 units. Grafana queries
# a panel when any part of it comes into view (its lazy loading), so a panel whose top is above
# unit 22 is counted. For node-exporter-full any view from 20 to 34 units counts the same: its
# two open rows end at unit 20, and below them are only its 14 collapsed rows' headers.
VIEW_ROWS = 22


def grafana_view(board, view_rows=VIEW_ROWS):
    """What Grafana queries for the first screen of `board` (classic JSON): the panels outside
    collapsed rows whose top is in view, with their requests per refresh (one per Prometheus
    target not hidden; an instant-and-range target two; an exemplar query one more)."""
    panels = []
    for p in board.get("panels", []):
        # A collapsed row holds its panels inside it (not queried until opened); an open row's
        # panels follow it at the top level.
        if p.get("type") == "row":
            continue
        if p.get("gridPos", {}).get("y", 0) >= view_rows:
            continue
        n = 0
        for t in p.get("targets", []):
            if t.get("hide"):
                continue
            ds = t.get("datasource") or p.get("datasource") or {}
            kind = ds.get("type", "prometheus") if isinstance(ds, dict) else "prometheus"
            if kind not in ("prometheus", "datasource") and "$" not in str(ds.get("uid", "")):
                continue
            both = t.get("instant") is True and t.get("range") is True
            n += 2 if both else 1
            n += 1 if t.get("exemplar") is True else 0
        if n:
            panels.append((p.get("title", ""), n))
    return panels


def refresh_s(text):
    m = re.fullmatch(r"(\d+)(ms|s|m|h|d)", text or "")
    if not m:
        return None
    return int(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def toml_blocks(text):
    """The imported TOML's [[panel]] and [[variable]] entries as text, in order (the importer
    writes one entry after another, each starting with its header)."""
    blocks, cur = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("[[") and cur:
            blocks.append("".join(cur))
            cur = []
        cur.append(line)
    if cur:
        blocks.append("".join(cur))
    return blocks


def fit(title, w=28):
    """A title as the console cuts it (ui::dashboard::fit, ROW_TITLE_MAX)."""
    return title if len(title) <= w else title[: w - 1] + "…"


def on_screen(panels, pane):
    """The panels (indices) whose titles are drawn in `pane`: the compact form's chart box
    (`┌ Title ─`) and its one-row panels (` Title   value`)."""
    lines = pane.splitlines()
    shown = []
    for i, p in enumerate(panels):
        t = fit(p["title"])
        if any(f" {t} " in line or line.startswith(f" {t}") for line in lines):
            shown.append(i)
    return shown


def node_full(args):
    import tomllib

    work = os.path.join(args.workdir, "node-full")
    os.makedirs(work, exist_ok=True)
    with open(args.node_full) as f:
        board = json.load(f)
    # (a) imported with the real binary, no --prometheus: the variables are left as
    # [[variable]] entries for the console to resolve.
    imp = subprocess.run(
        [args.warroom, "import", "grafana", args.node_full, "--toml"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = imp.stdout
    full = os.path.join(work, "imported.toml")
    with open(full, "w") as f:
        f.write(text)
    parsed = tomllib.loads(text)
    panels = parsed.get("panel", [])
    variables = parsed.get("variable", [])
    open_ = [i for i, p in enumerate(panels) if not p.get("collapsed")]
    rows = sorted({p.get("row", "") for p in panels if p.get("collapsed")})
    everies = sorted({p.get("every", "-") for p in panels})
    report = imp.stderr.strip().splitlines()
    print()
    print(
        f"node-exporter-full: `warroom import grafana {os.path.basename(args.node_full)} --toml` "
        f"({report[0] if report else ''}): {len(panels)} panels, {len(open_)} outside the "
        f"{len(rows)} collapsed rows; every = {', '.join(everies)}; variables "
        f"{', '.join('$' + v['name'] for v in variables)}"
    )
    lookup = metric_labels(args.port, "node_uname_info")
    print(f"node_uname_info on this Prometheus: {lookup or 'none (the variables will not resolve)'}")

    a = measure(
        args, os.path.join(work, "a"), full, args.node_settle, args.node_window, True, "node_"
    )
    shown = on_screen(panels, a["pane"])
    with open(os.path.join(work, "a-pane.txt"), "w") as f:
        f.write(a["pane"])
    if not shown:
        print("no panel title found on screen; the pane was:\n" + a["pane"], file=sys.stderr)
        return 1
    # (b) the panels on screen alone: their entries as imported, with the variables.
    blocks = toml_blocks(text)
    panel_blocks = [b for b in blocks if b.startswith("[[panel]]")]
    var_blocks = [b for b in blocks if b.startswith("[[variable]]")]
    assert len(panel_blocks) == len(panels), (len(panel_blocks), len(panels))
    alone = os.path.join(work, "on-screen.toml")
    with open(alone, "w") as f:
        for i in shown:
            f.write(panel_blocks[i].rstrip("\n") + "\n\n")
        for b in var_blocks:
            f.write(b.rstrip("\n") + "\n\n")
    b = measure(
        args, os.path.join(work, "b"), alone, args.node_settle, args.node_window, True, "node_"
    )
    shown_b = on_screen([panels[i] for i in shown], b["pane"])
    # (c) Grafana's count for the same view.
    view = grafana_view(board)
    per_refresh = sum(n for _, n in view)
    every = refresh_s(board.get("refresh")) or 60
    c = per_refresh * 60 / every

    print(
        f"on screen at 160x48 (titles read off the pane): {len(shown)} of the {len(open_)} "
        f"open panels; in (b) {len(shown_b)} of {len(shown)} drawn"
        + ("; the pane says more panels are off screen" if "more panels" in a["pane"] else "")
    )
    print(
        f"Grafana, 1920x1080 ({VIEW_ROWS} grid units of 30+8 px in view): {len(view)} panels, "
        f"{per_refresh} target requests a refresh, refresh {board.get('refresh')}"
    )
    print()
    print("| node-exporter-full, idle | panels | requests/min | KiB/min | Prometheus CPU | warroom CPU | warroom peak |")
    print("|---|---|---|---|---|---|---|")
    for name, n, r in (
        ("(a) imported as is", len(panels), a),
        ("(b) the panels on screen alone", len(shown), b),
    ):
        print(
            f"| {name} | {n} | {r['req_min']:.1f} | {r['kib_min']:.0f} | {r['prom_cpu']:.2f} % "
            f"| {r['war_cpu']:.2f} % | {r['peak']:.1f} MiB |"
        )
    print(f"| (c) Grafana, same view | {len(view)} | {c:.1f} | | | | |")
    print()
    ab = a["req_min"] / b["req_min"] if b["req_min"] else float("inf")
    ac = a["req_min"] / c if c else float("inf")
    print(
        f"a/b = {ab:.2f} (target ≤ 1.5: {'holds' if ab <= 1.5 else 'does not hold'}); "
        f"a/c = {ac:.2f} (target ≤ 1: {'holds' if ac <= 1.0 else 'does not hold'}); "
        f"window {args.node_window:.0f} s after {args.node_settle:.0f} s"
    )
    for name, r in (("a", a), ("b", b)):
        kinds = ", ".join(f"{h} {v:.1f}" for h, v in sorted(r["by_handler"].items()))
        print(f"({name}) requests/min by handler: {kinds or 'none'}")
        if r["kinds"]:
            print(f"({name}) by kind, a minute (Prometheus's query log): {breakdown(r['kinds'])}")
        if r["empty"]:
            print(f"({name}) {r['empty']} of the dashboard's queries had a variable left empty")
    return 0


def logged(path, wall, mine):
    """What Prometheus's query log (its query_log_file) holds inside the window `wall` (wall
    clock seconds): per kind of request, how many a minute and Prometheus's time executing them
    (ms a minute, the log's execTotalTime). Kinds: `range` (query_range), `instant` (one
    panel's value), `grouped` (hidden panels' worst series, tagged `warroom_panel`), and
    `other` (a query that reads none of the dashboard's metrics, whose names start with `mine`:
    the console's runbook advice). Also how many of the dashboard's queries had a variable left
    empty (`=""`)."""
    import datetime

    kinds, empty = {}, 0
    if not path or not os.path.exists(path):
        return kinds, empty
    span = (wall[1] - wall[0]) / 60
    with open(path) as f:
        for line in f:
            try:
                d = json.loads(line)
                ts = datetime.datetime.fromisoformat(d["ts"].replace("Z", "+00:00")).timestamp()
            except (ValueError, KeyError):
                continue
            if not wall[0] <= ts <= wall[1]:
                continue
            q = d.get("params", {}).get("query", "")
            path_ = d.get("httpRequest", {}).get("path", "")
            if mine not in q:
                kind = "other"
            elif path_.endswith("query_range"):
                kind = "range"
            elif "warroom_panel" in q:
                kind = "grouped"
            else:
                kind = "instant"
            empty += mine in q and '=""' in q
            n, ms = kinds.get(kind, (0.0, 0.0))
            took = d.get("stats", {}).get("timings", {}).get("execTotalTime", 0.0)
            kinds[kind] = (n + 1 / span, ms + 1000 * took / span)
    return kinds, empty


KINDS = ("range", "instant", "grouped", "other")


def breakdown(kinds):
    """`range 12 (30 ms) · instant …`: requests a minute and Prometheus's ms a minute."""
    return " · ".join(
        f"{k} {kinds[k][0]:.0f} ({kinds[k][1]:.0f} ms)" for k in KINDS if k in kinds
    )


def metric_labels(port, name):
    url = f"http://127.0.0.1:{port}/api/v1/series?" + urllib.parse.urlencode({"match[]": name})
    with urllib.request.urlopen(url, timeout=10) as r:
        data = json.load(r)["data"]
    return "; ".join(
        ", ".join(f"{k}={v}" for k, v in sorted(s.items()) if k in ("job", "instance", "nodename"))
        for s in data
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backfill", help="write the OpenMetrics file here and stop")
    ap.add_argument("--now", type=int)
    ap.add_argument("--port", type=int)
    ap.add_argument("--prom-pid", type=int)
    ap.add_argument("--warroom")
    ap.add_argument("--workdir")
    ap.add_argument("--settle", type=float, default=10)
    ap.add_argument("--window", type=float, default=30)
    ap.add_argument("--panels", default="8,50,275,1000")
    ap.add_argument("--widths", default="1,100,2000")
    ap.add_argument("--node-full", help="a Grafana dashboard (node-exporter-full) to measure")
    ap.add_argument("--node-settle", type=float, default=30)
    ap.add_argument("--node-window", type=float, default=180)
    ap.add_argument("--query-log", help="Prometheus's query_log_file (requests by kind)")
    args = ap.parse_args()
    if args.backfill:
        backfill(args.backfill, args.now)
        return
    if args.node_full:
        return node_full(args)
    print("| panels | series a panel | requests/min | KiB/min | Prometheus CPU | warroom CPU | warroom peak |")
    print("|---|---|---|---|---|---|---|")
    kinds = []
    for w in (int(x) for x in args.widths.split(",")):
        for n in (int(x) for x in args.panels.split(",")):
            r = one(args, n, w)
            kinds.append((n, w, r["kinds"]))
            print(
                f"| {n} | {w} | {r['req_min']:.0f} | {r['kib_min']:.0f} | {r['prom_cpu']:.1f} % "
                f"| {r['war_cpu']:.1f} % | {r['peak']:.1f} MiB |",
                flush=True,
            )
    if any(k for _, _, k in kinds):
        print()
        print("Requests a minute by kind, with Prometheus's time executing them (ms a minute, its")
        print("query log): range = a chart's or a sparkline's new points, instant = a panel's")
        print("latest value (a chart between its new points, a one-row panel), grouped = hidden")
        print("panels' worst series (up to 25 a request), other = the console's runbook advice.")
        print()
        print("| panels | series a panel | " + " | ".join(KINDS) + " |")
        print("|---|---|" + "---|" * len(KINDS))
        for n, w, k in kinds:
            cells = " | ".join(
                f"{k[x][0]:.0f} ({k[x][1]:.0f} ms)" if x in k else "0" for x in KINDS
            )
            print(f"| {n} | {w} | {cells} |")


if __name__ == "__main__":
    sys.exit(main())
