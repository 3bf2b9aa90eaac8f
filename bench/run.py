"""Run every benchmark and print one Markdown results table (with the machine it ran on).

    python3 bench/run.py [--quick] [--only poll,ui,log,idle,startup,controller]

Each benchmark runs in its own process (peak memory is per process) and is compared
with a reference measured in the same run; the ratio is what to read on a noisy
machine. ``--quick``: 1k/10k jobs only for poll/UI, a 256 MiB log, 20 s idle and
controller windows. The 100k site is generated once into /tmp (about 15 s) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def machine() -> str:
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        platform.processor() or "?",
    )
    mem_kib = int(
        next(
            ln.split()[1]
            for ln in Path("/proc/meminfo").read_text().splitlines()
            if ln.startswith("MemTotal")
        )
    )
    try:
        from importlib.metadata import version

        textual = version("textual")
    except Exception:
        textual = "?"
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem_kib / 2**20:.1f} GiB RAM, "
        f"Linux {platform.release()}, "
        f"Python {platform.python_version()}, Textual {textual}"
    )


def child(*args: str, timeout: float = 900) -> dict:
    r = subprocess.run(
        [sys.executable, *args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


Row = tuple[
    str, str, str, str, str, str, str
]  # benchmark, measure, cockpit, reference, ratio, target, met


def ms(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s >= 0.01 else f"{s * 1000:.1f} ms"


def ok(cond: bool) -> str:
    return "yes" if cond else "**no**"


def bench_poll(sizes: list[int]) -> list[Row]:
    rows: list[Row] = []
    res = {n: child(str(BENCH / "bench_poll.py"), "--jobs", str(n)) for n in sizes}
    base = res[sizes[0]]
    for n, r in res.items():
        rows.append(
            (
                "1 poll",
                f"{n // 1000}k jobs + {r['nodes'] // 1000}k nodes: collect+parse+diagnose+rows "
                f"({ms(r['collect_parse_s'])} + {ms(r['diagnose_s'])} + {ms(r['rows_s'])})",
                ms(r["poll_s"]),
                f"{ms(r['floor_s'])} (same commands + bytes.split)",
                f"{r['poll_s'] / r['floor_s']:.1f}×",
                "linear, small constant",
                "see below",
            )
        )
    for n, r in res.items():
        rows.append(
            (
                "1 poll",
                f"{n // 1000}k jobs, the next poll "
                "(last poll's parse tables; same rows: best case) "
                f"collect+parse {ms(r['warm_collect_parse_s'])}",
                ms(r["warm_poll_s"]),
                f"first poll {ms(r['poll_s'])}",
                f"{r['warm_poll_s'] / r['poll_s']:.2f}×",
                "",
                "",
            )
        )
    for n, r in res.items():
        if n == sizes[0]:
            continue
        per = (r["poll_s"] - base["poll_s"]) / (n - sizes[0]) * 1e6
        rows.append(
            (
                "1 poll",
                f"marginal cost per job {sizes[0] // 1000}k→{n // 1000}k",
                f"{per:.0f} µs/job",
                f"{(r['floor_s'] - base['floor_s']) / (n - sizes[0]) * 1e6:.1f} µs/job floor; "
                f"json.loads of the squeue rows {ms(r['json_loads_s'])}",
                f"{per / max(1e-9, (r['floor_s'] - base['floor_s']) / (n - sizes[0]) * 1e6):.0f}×",
                "",
                "",
            )
        )
    for n, r in res.items():
        rows.append(
            (
                "1 poll",
                f"peak RSS of the polls at {n // 1000}k jobs "
                f"(process, incl. {r['base_rss_mib']:.0f} MiB "
                "interpreter; read before the references run)",
                f"{r['peak_rss_mib']:.0f} MiB",
                f"{r.get('process_peak_rss_mib', r['peak_rss_mib']):.0f} "
                "MiB after the references (bytes.split, JSON)",
                "",
                "≤ 300 MB",
                ok(r["peak_rss_mib"] * 1.048576 <= 300),
            )
        )
    bad = [n for n, r in res.items() if r["warnings"]]
    rows.append(
        (
            "1 poll",
            "parser warnings on the generated site",
            str(sum(r["warnings"] for r in res.values())),
            "0",
            "",
            "0",
            ok(not bad),
        )
    )
    return rows


def bench_ui(sizes: list[int]) -> list[Row]:
    res = {n: child(str(BENCH / "bench_ui.py"), "--jobs", str(n)) for n in sizes}
    ref = res[sizes[0]]
    rows: list[Row] = []
    for key, what, limit in (
        ("apply_s", "apply a new snapshot (UI thread, publish→frame)", 0.100),
        ("j_s", "keypress `j` → frame (median)", 0.050),
        ("pagedown_s", "keypress `pagedown` → frame (median)", 0.050),
        ("filter_s", "`/` filter, each typed char → frame (median)", 0.050),
        ("filter_first_char_s", "`/` filter, first char → frame", 0.050),
    ):
        for n in sizes[1:]:
            r = res[n]
            ratio = r[key] / ref[key]
            rows.append(
                (
                    "2 UI",
                    f"{what} at {n // 1000}k",
                    ms(r[key]),
                    f"{ms(ref[key])} at {sizes[0] // 1000}k",
                    f"{ratio:.2f}×",
                    f"≤ {ms(limit)}, ≤ 1.5× of 1k",
                    ok(r[key] <= limit and ratio <= 1.5),
                )
            )
    for n in sizes:
        r = res[n]
        rows.append(
            (
                "2 UI",
                "longest full GC pause (gen 2) in the app at "
                f"{n // 1000}k ({r['gc2_count']} collections)",
                ms(r["gc2_max_s"]),
                f"{ms(ref['gc2_max_s'])} at {sizes[0] // 1000}k",
                "",
                "≤ 50 ms (a freeze)",
                ok(r["gc2_max_s"] <= 0.05),
            )
        )
    return rows


def bench_log(size_mib: int) -> list[Row]:
    r = subprocess.run(
        [sys.executable, str(BENCH / "bench_logscan.py"), "--size-mib", str(size_mib)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:] + r.stdout[-2000:])
    out = r.stdout
    grep = float(re.search(r"grep -n -m1 -E \(LC_ALL=C\):\s+([\d.]+) s", out).group(1))  # type: ignore[union-attr]
    ours = float(re.search(r"first_error \(scan_path\):\s+([\d.]+) s", out).group(1))  # type: ignore[union-attr]
    mem = re.search(r"scanner memory:\s+(.*)", out).group(1)  # type: ignore[union-attr]
    anon = re.search(r"anonymous (\d+) MiB", mem)
    return [
        (
            "3 log",
            f"first red error in a {size_mib} MiB log (error near the end)",
            f"{ours:.2f} s",
            f"{grep:.2f} s (grep -n -m1 -E, same patterns)",
            f"{ours / grep:.2f}×",
            "≤ 1.5× grep",
            ok(ours / grep <= 1.5),
        ),
        (
            "3 log",
            "scanner memory",
            mem,
            "",
            "",
            "flat in file size",
            ok(anon is not None and int(anon.group(1)) < 100),
        ),
    ]


def bench_idle(seconds: float) -> list[Row]:
    r = child(str(BENCH / "bench_system.py"), "idle", "--seconds", str(seconds))
    return [
        (
            "4 idle",
            f"CPU of `cockpit --demo` in tmux, {r['idle_window_s']:.0f} s, no keys",
            f"{r['idle_cpu_s']:.2f} s = {r['idle_core_pct']:.2f} % of a core",
            "",
            "",
            "≤ 0.5 %",
            ok(r["idle_core_pct"] <= 0.5),
        )
    ]


def bench_startup() -> list[Row]:
    r = child(str(BENCH / "bench_system.py"), "startup")
    return [
        (
            "5 start-up",
            "`cockpit --demo` in tmux: launch → header on screen (median of 3)",
            ms(r["first_frame_s"]),
            f"{ms(r['hello_first_frame_s'])} (one-widget Textual app)",
            f"{r['first_frame_s'] / r['hello_first_frame_s']:.1f}×",
            "≤ 500 ms",
            ok(r["first_frame_s"] <= 0.5),
        ),
        (
            "5 start-up",
            "the same, first run of a checkout (no bytecode cache: every module compiled)",
            ms(r["first_frame_no_bytecode_s"]),
            "",
            "",
            "",
            "",
        ),
        (
            "5 start-up",
            "`import cockpit.app` (fresh interpreter)",
            ms(r["import_app_s"]),
            f"{ms(r['python_bare_s'])} (bare python)",
            "",
            "",
            "",
        ),
        (
            "5 start-up",
            "importtime, biggest direct imports of cockpit.app",
            "; ".join(r["importtime_top"][:5]),
            "",
            "",
            "",
            "",
        ),
        (
            "5 start-up",
            "huaweicloudsdk* modules imported at start-up",
            r["sdk_imported_at_startup"],
            "",
            "",
            "none",
            ok(r["sdk_imported_at_startup"] == "[]"),
        ),
    ]


def bench_controller(seconds: float) -> list[Row]:
    r = child(str(BENCH / "bench_system.py"), "controller", "--seconds", str(seconds))
    polls = max(1, r["polls"])
    calls = r["calls"]
    per = {k: v / polls for k, v in calls.items()}
    rows: list[Row] = [
        (
            "6 controller",
            f"{r['polls']} polls in {r['controller_window_s']:.0f} s, interval 5 s; "
            f"screens {' > '.join(r['screens'])}",
            ", ".join(f"{k} {v}/min" for k, v in r["calls_per_min"].items()),
            "",
            "",
            "",
            "",
        )
    ]
    sq = per.get("squeue", 0)
    nodes = per.get("scontrol show node", 0) + per.get("sinfo", 0)
    rows.append(
        (
            "6 controller",
            "squeue / node queries per poll",
            f"{sq:.2f} / {nodes:.2f}",
            "",
            "",
            "≤ 1 / ≤ 1",
            ok(sq <= 1.0 and nodes <= 1.0),
        )
    )
    dp, dc = max(1, r["dashboard_polls"]), r["dashboard_calls"]
    jp, jc = max(1, r["drilldown_polls"]), r["drilldown_calls"]
    rows.append(
        (
            "6 controller",
            f"dashboard only ({r['dashboard_polls']} polls): sacct / scontrol show job per poll",
            f"{dc.get('sacct', 0) / dp:.2f} / {dc.get('scontrol show job', 0) / dp:.2f}",
            "",
            "",
            "sacct ≤ 1 per poll (one batched sacct for newly failed jobs; "
            "by design, see cockpit/runtime/evidence.py)",
            ok(dc.get("sacct", 0) / dp <= 1.0),
        )
    )
    rows.append(
        (
            "6 controller",
            f"job + log screens open ({r['drilldown_polls']} polls): "
            "sacct / scontrol show job per poll",
            f"{jc.get('sacct', 0) / jp:.2f} / {jc.get('scontrol show job', 0) / jp:.2f}",
            "",
            "",
            "drill-down: once, cached until the next poll",
            ok(jc.get("sacct", 0) / jp <= 2.0),
        )
    )
    d = child(
        str(BENCH / "bench_system.py"),
        "controller",
        "--seconds",
        str(seconds),
        "--evidence",
        "drill-down",
    )
    dp, dc = max(1, d["dashboard_polls"]), d["dashboard_calls"]
    jp, jc = max(1, d["drilldown_polls"]), d["drilldown_calls"]
    rows.append(
        (
            "6 controller",
            '`evidence = "drill-down"`: dashboard only '
            f"({d['dashboard_polls']} polls), then job + log "
            f"screens ({d['drilldown_polls']} polls): sacct / scontrol show job per poll",
            f"{dc.get('sacct', 0) / dp:.2f} / {dc.get('scontrol show job', 0) / dp:.2f}, then "
            f"{jc.get('sacct', 0) / jp:.2f} / {jc.get('scontrol show job', 0) / jp:.2f}",
            "",
            "",
            "sacct and log reads only on drill-down",
            ok(dc.get("sacct", 0) == 0 and dc.get("scontrol show job", 0) == 0),
        )
    )
    return rows


def table(rows: list[Row]) -> str:
    head = (
        "| # | measure | cockpit | reference | ratio | "
        "target | met |\n|---|---|---|---|---|---|---|\n"
    )
    return head + "".join(
        "| " + " | ".join(c.replace("|", "\\|") for c in r) + " |\n" for r in rows
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="poll,ui,log,idle,startup,controller")
    args = ap.parse_args()
    only = set(args.only.split(","))
    sizes = [1000, 10_000] if args.quick else [1000, 10_000, 100_000]
    rows: list[Row] = []
    steps = [
        ("poll", lambda: bench_poll(sizes)),
        ("ui", lambda: bench_ui(sizes)),
        ("log", lambda: bench_log(256 if args.quick else 1024)),
        ("idle", lambda: bench_idle(20 if args.quick else 60)),
        ("startup", bench_startup),
        ("controller", lambda: bench_controller(20 if args.quick else 30)),
    ]
    for name, fn in steps:
        if name not in only:
            continue
        print(f"… {name}", file=sys.stderr, flush=True)
        try:
            rows += fn()
        except Exception as exc:  # one broken benchmark must not hide the others
            rows.append(
                (
                    name,
                    "FAILED",
                    str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__,
                    "",
                    "",
                    "",
                    "**no**",
                )
            )
    print(f"Machine: {machine()}\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
