#!/usr/bin/env python3
"""What does a Slurm TUI cost per refresh on a big queue? Runs one peer and writes the table.

  run_peer.sh CMD [ARGS...]   one run (this file's `run`); env N=100000 jobs, DURATION=60 s,
                              LABEL (row name, default: the command line), PEER_VERSION (free text)
  peerbench.py report         rebuild RESULTS.md from out/*/result.json (keeps its "## Notes")

A run starts CMD in a detached tmux pane (own socket "peerbench-PID", 160x48) with fakebin/ first on
PATH, so every squeue/sinfo/scontrol/sacct it calls hits the fake and is logged. Over DURATION it
reads /proc: the peer's own CPU (utime+stime), its reaped children's CPU (cutime+cstime: the fake
squeue runs), the tmux server's CPU (the terminal work the redraws cause), peak RSS (VmHWM); it
counts calls in the log and checks the pane for job ids. Then it times the fake squeue alone with
the argv the peer used, and a bare Python reader of that output: the floor any TUI pays.
Only processes it started are stopped: the tmux server on its own socket.
"""
import collections, json, os, re, shlex, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
FAKEBIN = os.path.join(HERE, "fakebin")
# a tmux socket of this run's own: two benchmarks on one machine must not kill each other's
SOCK = os.environ.get("PEERBENCH_SOCKET", f"peerbench-{os.getpid()}")
SESSION, SIZE = "bench", ("160", "48")
JOB_ID = re.compile(r"\b4[2-9]\d{5}(?!\d)")          # the fake's job ids start at 4200000
TICK = os.sysconf("SC_CLK_TCK")
READER = "import sys; sum(1 for _ in sys.stdin)"


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCK, "-f", "/dev/null", *args],
                          capture_output=True, text=True).stdout


def cpu(pid):
    """(own, reaped children) CPU seconds from /proc/PID/stat."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK, (int(f[13]) + int(f[14])) / TICK


def hwm_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def calls(log, t0=0.0, t1=float("inf")):
    out = []
    for line in open(log) if os.path.exists(log) else []:
        ts, cmd, args = line.rstrip("\n").split("\t", 2)
        if t0 <= float(ts) <= t1:
            out.append((cmd, args))
    return out


def _calls_ts(log, t0, t1):
    out = []
    for line in open(log) if os.path.exists(log) else []:
        ts, cmd, args = line.rstrip("\n").split("\t", 2)
        if t0 <= float(ts) <= t1:
            out.append((ts, cmd, args))
    return out


def timed(argv, env, stdin=None, stdout=subprocess.DEVNULL):
    """Wall and CPU seconds of one child, from wait4's rusage."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdin=stdin, stdout=stdout)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime


def floor(n, args, log, repeat=3):
    """The fake squeue alone with the peer's argv, and a bare Python reader of its output."""
    env = dict(os.environ, FAKE_SLURM_JOBS=str(n), FAKE_SLURM_LOG=log)
    argv = [os.path.join(FAKEBIN, "squeue"), *shlex.split(args)]
    sq, rd = [], []
    with tempfile.NamedTemporaryFile("w+b") as f:
        for _ in range(repeat):
            f.seek(0); f.truncate()
            sq.append(timed(argv, env, stdout=f))
        size = os.fstat(f.fileno()).st_size
        f.seek(0); lines = sum(1 for _ in f)
        for _ in range(repeat):
            with open(f.name, "rb") as src:
                rd.append(timed([sys.executable, "-c", READER], env, stdin=src))
    med = lambda xs, i: round(statistics.median(x[i] for x in xs), 3)
    return dict(squeue_wall_s=med(sq, 0), squeue_cpu_s=med(sq, 1), out_mb=round(size / 2**20, 1),
                out_lines=lines, reader_wall_s=med(rd, 0), reader_cpu_s=med(rd, 1))


def run(cmd):
    n, duration = int(os.environ.get("N", 100000)), float(os.environ.get("DURATION", 60))
    label = os.environ.get("LABEL") or shlex.join([os.path.basename(cmd[0]), *cmd[1:]])
    out = os.environ.get("OUT") or os.path.join(HERE, "out", re.sub(r"[^\w.-]+", "_", label) + f"-N{n}")
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "calls.log")
    open(log, "w").close()
    tmux("kill-server")                                  # a leftover run of ours, if any
    env = f"PATH={FAKEBIN}:{os.environ['PATH']} FAKE_SLURM_JOBS={n} FAKE_SLURM_LOG={log}"
    loadavg = open("/proc/loadavg").read().split()[0]
    tmux("new-session", "-d", "-s", SESSION, "-x", SIZE[0], "-y", SIZE[1], f"exec env {env} {shlex.join(cmd)}")
    t0 = time.time()
    pid, server = int(tmux("display", "-p", "-t", SESSION, "#{pane_pid}")), int(tmux("display", "-p", "#{pid}"))
    c0, s0 = cpu(pid), cpu(server)[0]
    last, peak, first, exited = c0, 0.0, None, None
    samples = [(t0, c0[0])]  # (time, own CPU): the steady state is read from these below
    try:
        while time.time() - t0 < duration:
            if first is None and JOB_ID.search(tmux("capture-pane", "-p", "-t", SESSION)):
                first = time.time() - t0
            try:
                last, peak = cpu(pid), max(peak, hwm_mb(pid))
                samples.append((time.time(), last[0]))
            except (FileNotFoundError, ProcessLookupError):
                exited = round(time.time() - t0, 1)
                break
            time.sleep(0.25 if first is None else 1.0)
        t1 = time.time()
        screen = tmux("capture-pane", "-p", "-t", SESSION)
        s1 = cpu(server)[0]
    finally:
        tmux("kill-server")
    window = t1 - t0
    made = calls(log, t0 - 1, t1)
    squeues = collections.Counter(args for c, args in made if c == "squeue")
    # steady state: from the third poll on (start-up and the first polls left out), the CPU
    # between the first sample after that poll and the last sample, per poll started in between.
    # A poll is a squeue call with the peer's own argv (its most frequent): the cockpit's at-risk
    # sampler also runs `squeue --states=RUNNING -j ...`, and counted as refreshes those calls
    # made its CPU per refresh look ~40 % lower than per poll (#33, round 13)
    main = squeues.most_common(1)[0][0] if squeues else None
    times = sorted(
        float(ts) for ts, c, a in _calls_ts(log, t0 - 1, t1) if c == "squeue" and a == main
    )
    steady = None
    if len(times) >= 4:
        after = [(t, c) for t, c in samples if t >= times[2]]
        if len(after) >= 2:
            n_polls = sum(1 for t in times if after[0][0] <= t <= after[-1][0])
            if n_polls:
                steady = dict(cpu_s=round(after[-1][1] - after[0][1], 2), polls=n_polls,
                              ms_per_poll=round(1000 * (after[-1][1] - after[0][1]) / n_polls))
    res = dict(label=label, peer_version=os.environ.get("PEER_VERSION", ""), cmd=cmd, n=n,
               steady=steady,
               window_s=round(window, 1), loadavg_before=loadavg, exited_at_s=exited,
               peer_cpu_s=round(last[0] - c0[0], 2), children_cpu_s=round(last[1] - c0[1], 2),
               tmux_cpu_s=round(s1 - s0, 2), peak_rss_mb=round(peak, 1),
               calls=dict(collections.Counter(c for c, _ in made)),
               squeue_per_min=round(sum(squeues.values()) * 60 / window, 1),
               first_jobs_s=round(first, 1) if first is not None else None,
               job_rows_on_screen=sum(1 for line in screen.splitlines() if JOB_ID.search(line)),
               screen_first_line=screen.splitlines()[0].strip() if screen.strip() else "",
               squeue_argv=squeues.most_common(1)[0][0] if squeues else None)
    if res["squeue_argv"] is not None:
        res["floor"] = floor(n, res["squeue_argv"], os.path.join(out, "floor-calls.log"))
    open(os.path.join(out, "screen.txt"), "w").write(screen)
    json.dump(res, open(os.path.join(out, "result.json"), "w"), indent=1, ensure_ascii=False)
    print(json.dumps(res, indent=1, ensure_ascii=False))


def machine():
    info = dict(map(str.strip, l.split(":", 1)) for l in open("/proc/cpuinfo").read().split("\n\n")[0].splitlines() if ":" in l)
    g = lambda k: info.get(k, "?")
    return (f"{os.cpu_count()} CPUs (nproc {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()}), "
            f"{g('model name')} (family {g('cpu family')} model {g('model')}), "
            f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') // 2**30} GiB, kernel {os.uname().release}")


def report():
    rows = []
    for d in sorted(os.listdir(os.path.join(HERE, "out"))):
        p = os.path.join(HERE, "out", d, "result.json")
        if os.path.exists(p):
            rows.append(json.load(open(p)))
    rows.sort(key=lambda r: (r["label"], r["n"]))
    per_refresh = lambda r: f"{1000 * r['peer_cpu_s'] / max(1, r['squeue_per_min'] * r['window_s'] / 60):.0f}"
    lines = [
        "# Peer TUIs on a big synthetic Slurm queue", "",
        f"Machine: {machine()}.  ", f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}.  ",
        "Peers: " + ", ".join(sorted({f'{r["label"]} ({r["peer_version"]})' if r["peer_version"] else r["label"] for r in rows})) + ".", "",
        "Made by `bench/peer/peerbench.py report` from `out/*/result.json`; rerun with `bench/peer/side_by_side.sh`",
        "or `N=10000 bench/peer/run_peer.sh CMD ARGS...` for any other TUI. Each run: the peer alone in a",
        "detached tmux pane (160x48) for the window shown, with `fakebin/` (a Python fake of squeue & co.)",
        "first on PATH. CPU is utime+stime from /proc, in seconds over the window.", "",
        "| peer (command line) | N jobs | window s | peer CPU s (% of 1 core) | peer CPU ms / refresh | squeue calls/min "
        "| steady CPU ms / refresh (from the 3rd poll on: squeue calls of its own argv) "
        "| fake squeue CPU s in window (reaped children) | tmux server CPU s | peak RSS MB | first jobs on screen s | job rows on screen at end | load avg before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['label']}` | {r['n']:,} | {r['window_s']} | {r['peer_cpu_s']} ({100 * r['peer_cpu_s'] / r['window_s']:.1f} %) "
                     f"| {per_refresh(r)} | {r['squeue_per_min']} "
                     f"| {r['steady']['ms_per_poll'] if r.get('steady') else '-'} ({r['steady']['polls'] if r.get('steady') else 0} calls) "
                     f"| {r['children_cpu_s']} | {r['tmux_cpu_s']} | {r['peak_rss_mb']} "
                     f"| {r['first_jobs_s'] if r['first_jobs_s'] is not None else 'never'} | {r['job_rows_on_screen']}"
                     + (f" (peer exited at {r['exited_at_s']} s)" if r["exited_at_s"] else "") + f" | {r.get('loadavg_before', '')} |")
    lines += ["", "Floor: the fake squeue alone with the argv the peer used (median of 3, output to a file), "
              "and `python3 -c 'import sys; sum(1 for _ in sys.stdin)'` reading that file.", "",
              "| peer | N jobs | output MB | lines | fake squeue wall s | fake squeue CPU s | reader wall s | reader CPU s |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        f = r.get("floor")
        if f:
            lines.append(f"| `{r['label']}` | {r['n']:,} | {f['out_mb']} | {f['out_lines']:,} | {f['squeue_wall_s']} "
                         f"| {f['squeue_cpu_s']} | {f['reader_wall_s']} | {f['reader_cpu_s']} |")
    argvs = sorted({(r["label"], r["squeue_argv"]) for r in rows if r["squeue_argv"]})
    lines += ["", "squeue argv each peer used:", ""] + [f"- `{l}`: `squeue {a}`" for l, a in argvs]
    path = os.path.join(HERE, "RESULTS.md")
    old = open(path).read() if os.path.exists(path) else ""
    notes = old[old.index("## Notes"):] if "## Notes" in old else "## Notes\n\n(none yet)\n"
    open(path, "w").write("\n".join(lines) + "\n\n" + notes)
    print(open(path).read())


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"] and len(sys.argv) > 2:
        run(sys.argv[2:])
    elif sys.argv[1:] == ["report"]:
        report()
    else:
        sys.exit(__doc__)
