#!/usr/bin/env python3
"""warroom and a peer console side by side on one Prometheus (run by benches/peers.sh).

Each console runs in its own tmux server at 200x60, against the same Prometheus through a
counting TCP relay of its own (so the bytes and the first range answer are attributed to it).
Rounds interleave the consoles (the order alternates) and every figure is the median of the
rounds. One round of one console:

  starts     STARTS short starts of each console, interleaved one by one (the order
             alternating), each timed to its first frame and ended there
  start      tmux respawns the pane with the console; the clock starts just before
  first frame  the pane shows anything (tmux's screen polled every 2 ms); the round's figure
             is the median of this start and the short ones: one start varies by several
             milliseconds on a shared machine, as much as the two consoles differ
  first data   the relay sends the first bytes of an answer to a range query
  settle     SETTLE seconds, so the first full fetch is out of the idle figures
  window 1   WINDOW seconds untraced: CPU (/proc/PID/task/*/schedstat, nanoseconds),
             bytes from Prometheus, Prometheus's CPU (minus its rate with no console)
  window 2   WINDOW seconds under `strace -f -tt`: syscalls per second, and frames per
             second (bursts of writes to the terminal, a gap of 8 ms or more between two)
  end        peak RSS (VmHWM), threads

Prints the table with ratios (warroom / peer) and writes the raw rounds as JSON.
"""

import argparse
import json
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time


def schedstat_ns(pid):
    """CPU time of every live thread of `pid`, by thread id (nanoseconds)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def cpu_between(before, after):
    """CPU used between two schedstat readings (threads born in between count whole)."""
    return sum(ns - before.get(tid, 0) for tid, ns in after.items())


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rollup_kib(pid, key):
    """A line of /proc/PID/smaps_rollup (what the resident set is made of)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def threads(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


class Relay:
    """A TCP relay to Prometheus counting what comes back, on its own thread."""

    def __init__(self, upstream_port):
        self.upstream = ("127.0.0.1", upstream_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.bytes_back = 0
        self.requests = 0
        self.first_range_answer = None
        self.lock = threading.Lock()
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        sel = selectors.DefaultSelector()
        sel.register(self.listener, selectors.EVENT_READ, None)
        # socket -> (peer socket, is_client_side, state dict)
        while not self.stop:
            for key, _ in sel.select(timeout=0.2):
                if key.data is None:
                    try:
                        c, _ = self.listener.accept()
                    except OSError:
                        continue
                    try:
                        u = socket.create_connection(self.upstream, timeout=5)
                    except OSError:
                        c.close()
                        continue
                    c.setblocking(False)
                    u.setblocking(False)
                    state = {"range_pending": False}
                    sel.register(c, selectors.EVENT_READ, (u, True, state))
                    sel.register(u, selectors.EVENT_READ, (c, False, state))
                    continue
                s = key.fileobj
                peer, client_side, state = key.data
                try:
                    data = s.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    for x in (s, peer):
                        try:
                            sel.unregister(x)
                        except (KeyError, ValueError):
                            pass
                        x.close()
                    continue
                now = time.time()
                with self.lock:
                    if client_side:
                        n = data.count(b" HTTP/1.1\r\n")
                        self.requests += n
                        if b"/api/v1/query_range" in data:
                            state["range_pending"] = True
                    else:
                        self.bytes_back += len(data)
                        if state["range_pending"] and self.first_range_answer is None:
                            self.first_range_answer = now
                        state["range_pending"] = False
                try:
                    peer.setblocking(True)
                    peer.sendall(data)
                    peer.setblocking(False)
                except OSError:
                    pass

    def snapshot(self):
        with self.lock:
            return self.bytes_back, self.requests

    def close(self):
        self.stop = True
        self.thread.join(timeout=2)
        self.listener.close()


def tmux(sock, *args, capture=False):
    r = subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True)
    return r.stdout if capture else r.returncode


def frames_and_syscalls(trace_path, window):
    """Syscalls per second and frames per second (write bursts to fd 1) from an strace -f -tt
    log."""
    calls = 0
    writes = []
    with open(trace_path, errors="replace") as f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) < 3:
                continue
            rest = parts[2]
            if rest.startswith("<...") or rest.startswith("+++") or rest.startswith("---"):
                continue
            calls += 1
            if rest.startswith("write(1,") or rest.startswith("writev(1,"):
                h, m, s = parts[1].split(":")
                writes.append(int(h) * 3600 + int(m) * 60 + float(s))
    bursts = 0
    last = None
    for t in writes:
        if last is None or t - last >= 0.008:
            bursts += 1
        last = t
    return calls / window, bursts / window


def start_pane(name, argv, env, url):
    """A tmux server at 200x60 whose pane runs the console: (socket, t0, first frame, pid)."""
    cmd = [a.replace("{URL}", url) for a in argv]
    sock = f"peers{os.getpid()}{name}"
    tmux(sock, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "60", "sleep 3600")
    tmux(sock, "set", "-g", "remain-on-exit", "on")
    shell_cmd = "exec env " + " ".join(f"{k}={v}" for k, v in env.items()) + " " + " ".join(
        "'" + a.replace("'", "'\\''") + "'" for a in cmd
    )
    t0 = time.time()
    tmux(sock, "respawn-pane", "-k", shell_cmd)
    first_frame = None
    while time.time() - t0 < 10:
        screen = tmux(sock, "capture-pane", "-p", capture=True)
        if screen.strip():
            first_frame = time.time()
            break
        time.sleep(0.002)
    pid = int(tmux(sock, "display", "-p", "#{pane_pid}", capture=True).strip() or 0)
    return sock, t0, first_frame, pid


def end_pane(sock, pid):
    """Ends the tmux server and the console (grafatui ignores the hangup), bounded in time."""
    tmux(sock, "kill-server")
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 1.0)):
        if not os.path.exists(f"/proc/{pid}") or pid <= 0:
            break
        try:
            os.kill(pid, sig)
        except OSError:
            break
        deadline = time.time() + wait
        while os.path.exists(f"/proc/{pid}") and time.time() < deadline:
            time.sleep(0.05)


def first_frame_only(name, argv, env, args):
    """One short start: milliseconds to the first frame, then the console is ended."""
    relay = Relay(args.prometheus_port)
    sock, t0, first_frame, pid = start_pane(name, argv, env, f"http://127.0.0.1:{relay.port}")
    # A moment on screen, so the console is not ended in the middle of its start.
    time.sleep(0.3)
    end_pane(sock, pid)
    relay.close()
    return (first_frame - t0) * 1000 if first_frame else float("nan")


def one_round(name, argv, env, prom_pid, prom_idle_rate, args, workdir, starts=()):
    relay = Relay(args.prometheus_port)
    sock, t0, first_frame, pid = start_pane(name, argv, env, f"http://127.0.0.1:{relay.port}")
    one_start = (first_frame - t0) * 1000 if first_frame else float("nan")
    time.sleep(max(0.0, args.settle - (time.time() - t0)))
    c0, p0, (b0, r0) = schedstat_ns(pid), schedstat_ns(prom_pid), relay.snapshot()
    time.sleep(args.window)
    c1, p1, (b1, r1) = schedstat_ns(pid), schedstat_ns(prom_pid), relay.snapshot()
    trace = os.path.join(workdir, f"trace-{name}")
    st = subprocess.Popen(
        ["strace", "-f", "-tt", "-p", str(pid), "-o", trace],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(args.window)
    st.send_signal(signal.SIGINT)
    st.wait(timeout=10)
    sys_s, fps = frames_and_syscalls(trace, args.window)
    alive = os.path.exists(f"/proc/{pid}")
    fig = {
        "idle_cpu_pct": cpu_between(c0, c1) / 1e9 / args.window * 100,
        "peak_rss_mib": status_kib(pid, "VmHWM:") / 1024,
        "first_frame_ms": statistics.median([*starts, one_start]),
        "first_frame_this_start_ms": one_start,
        "first_data_ms": (relay.first_range_answer - t0) * 1000
        if relay.first_range_answer
        else float("nan"),
        "bytes_per_min": (b1 - b0) / args.window * 60,
        "requests_per_min": (r1 - r0) / args.window * 60,
        "prom_cpu_pct": max(
            0.0, cpu_between(p0, p1) / 1e9 / args.window * 100 - prom_idle_rate
        ),
        "syscalls_per_s": sys_s,
        "frames_per_s": fps,
        "threads": threads(pid),
        "rss_anon_mib": rollup_kib(pid, "Anonymous:") / 1024,
        "rss_file_mib": (rollup_kib(pid, "Rss:") - rollup_kib(pid, "Anonymous:")) / 1024,
        "alive": alive,
    }
    # A console that outlives its terminal is ended here, so the next round measures alone.
    end_pane(sock, pid)
    relay.close()
    return fig


def show(v):
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, list):
        return ",".join(f"{x:.1f}" for x in v)
    return str(v)


FIGURES = [
    ("idle CPU, % of a core", "idle_cpu_pct", "{:.2f}"),
    ("peak RSS, MiB", "peak_rss_mib", "{:.1f}"),
    ("start to first frame, ms", "first_frame_ms", "{:.0f}"),
    ("start to first data, ms", "first_data_ms", "{:.0f}"),
    ("bytes fetched per minute", "bytes_per_min", "{:,.0f}"),
    ("Prometheus's own CPU while serving it, %", "prom_cpu_pct", "{:.2f}"),
    ("syscalls per second, idle", "syscalls_per_s", "{:.1f}"),
    ("frames drawn per second, idle", "frames_per_s", "{:.2f}"),
    ("threads", "threads", "{:.0f}"),
    ("(resident at the end: anonymous, MiB)", "rss_anon_mib", "{:.1f}"),
    ("(resident at the end: file-backed, the binary and libraries, MiB)", "rss_file_mib", "{:.1f}"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prometheus-port", type=int, required=True)
    ap.add_argument("--prometheus-pid", type=int, required=True)
    ap.add_argument("--warroom", required=True, help="warroom argv as JSON, {URL} for the URL")
    ap.add_argument("--peer", required=True, help="the peer's argv as JSON")
    ap.add_argument("--peer-name", default="grafatui")
    ap.add_argument("--env", default="{}", help="environment for both, as JSON")
    ap.add_argument("--warroom-env", default="{}", help="more environment for warroom, as JSON")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settle", type=float, default=6.0)
    ap.add_argument("--window", type=float, default=12.0)
    ap.add_argument("--starts", type=int, default=4, help="short timed starts per console per round")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--json", help="write the rounds here")
    args = ap.parse_args()
    env = json.loads(args.env)
    envs = {"warroom": {**env, **json.loads(args.warroom_env)}, args.peer_name: env}
    consoles = {"warroom": json.loads(args.warroom), args.peer_name: json.loads(args.peer)}
    results = {k: [] for k in consoles}
    for r in range(args.rounds):
        # Prometheus's own rate with no console: scraping and its housekeeping.
        p0 = schedstat_ns(args.prometheus_pid)
        time.sleep(args.window / 2)
        prom_idle = cpu_between(p0, schedstat_ns(args.prometheus_pid)) / 1e9 / (args.window / 2) * 100
        order = list(consoles) if r % 2 == 0 else list(reversed(list(consoles)))
        starts = {k: [] for k in consoles}
        for i in range(args.starts):
            for name in order if i % 2 == 0 else list(reversed(order)):
                starts[name].append(first_frame_only(name, consoles[name], envs[name], args))
        for name in order:
            fig = one_round(
                name, consoles[name], envs[name], args.prometheus_pid, prom_idle, args, args.workdir,
                starts[name],
            )
            fig["first_frame_starts_ms"] = starts[name]
            results[name].append(fig)
            print(
                f"round {r + 1} {name:<9} "
                + " ".join(f"{k}={show(v)}" for k, v in fig.items()),
                file=sys.stderr,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    peer = args.peer_name
    print(f"| figure (median of {args.rounds} rounds) | warroom | {peer} | warroom / {peer} |")
    print("|---|---|---|---|")
    for label, key, fmt in FIGURES:
        w = statistics.median(x[key] for x in results["warroom"])
        g = statistics.median(x[key] for x in results[peer])
        ratio = f"{w / g:.2f}×" if g else "-"
        print(f"| {label} | {fmt.format(w)} | {fmt.format(g)} | {ratio} |")
    dead = [n for n, rs in results.items() if not all(x["alive"] for x in rs)]
    if dead:
        print(f"\npeers: {', '.join(dead)} exited during a round; its figures are not idle ones", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
