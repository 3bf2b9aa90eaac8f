from cockpit.diagnosis.rightsize import fmt_duration, round_mem_mib, round_time_s, suggest
from cockpit.model import AcctRecord


def run(jid, state="COMPLETED", req=16384, rss=None, elapsed=3600, limit=4 * 3600, steps_rss=()):
    rows = [AcctRecord(jid, "", "train", "gpu", state, None, req, None, elapsed, limit, "cn01")]
    for i, r in enumerate(steps_rss or ([rss] if rss is not None else [])):
        rows.append(
            AcctRecord(
                jid,
                "batch" if i == 0 else str(i - 1),
                "batch",
                "",
                state if state != "TIMEOUT" else "CANCELLED",
                None,
                None,
                r,
                elapsed,
                None,
                "cn01",
            )
        )
    return rows


def test_mem_and_time_from_history():
    recs = [
        *run("1", rss=3000, elapsed=50 * 60),
        *run("2", steps_rss=(1200, 4700), elapsed=65 * 60),
        *run("3", rss=3900, elapsed=40 * 60),
    ]
    s = suggest(recs)
    assert s.runs == 3
    # peak 4700 MiB (the srun step, not the batch step) x 1.2 = 5640 -> 6 GiB
    assert (s.mem_peak_mib, s.mem_mib, s.mem_arg) == (4700, 6144, "--mem=6G")
    # longest 65 min x 1.3 = 84.5 min -> 90 min (15-minute steps above 1 h)
    assert (s.elapsed_max_s, s.time_s, s.time_arg) == (3900, 5400, "--time=01:30:00")
    assert s.req_mem_mib == 16384 and s.timelimit_s == 4 * 3600
    assert s.mem_p95_mib == 4700 and s.notes == ()
    assert s.summary == (
        "from 3 runs: --mem=6G (peak 4700M, p95 4700M), "
        "--time=01:30:00 (longest 01:05:00, p95 01:05:00)"
    )


def test_p95_ignores_a_single_outlier_among_many():
    recs = [r for i in range(40) for r in run(str(i), rss=1000 + i, elapsed=600)]
    recs += run("99", rss=9000, elapsed=600)
    s = suggest(recs)
    assert (
        s.mem_peak_mib == 9000 and s.mem_p95_mib == 1038
    )  # nearest rank 39 of 41; evidence shows the outlier is one run
    assert s.mem_arg == "--mem=11G"  # still sized for the peak: a smaller limit would kill that run


def test_oom_and_timeout_runs_are_floors():
    recs = [
        *run("1", state="OUT_OF_MEMORY", req=8192, rss=8100, elapsed=300, limit=3600),
        *run("2", state="TIMEOUT", rss=2000, elapsed=3600, limit=3600),
    ]
    s = suggest(recs)
    assert s.oom_runs == 1 and s.timeout_runs == 1
    assert s.mem_peak_mib == 8192 and s.mem_arg == "--mem=10G"  # 8192 x 1.2 = 9830 -> 10 GiB
    assert s.time_arg == "--time=01:30:00"  # 3600 x 1.3 = 78 min -> 90 min
    assert any("out of memory" in n for n in s.notes) and any("time limit" in n for n in s.notes)


def test_running_and_placeholder_rows_are_ignored_and_no_data_says_so():
    recs = run("1", state="RUNNING", rss=100) + [
        AcctRecord(
            "2", "", "t", "p", "COMPLETED", None, None, None, None, None, "", placeholder=True
        )
    ]
    s = suggest(recs)
    assert s.runs == 0 and s.mem_arg == "" and s.time_arg == "" and s.summary == "no usable history"
    s = suggest(run("3", rss=None, elapsed=100))
    assert s.mem_arg == "" and "no MaxRSS" in s.notes[0] and s.time_arg == "--time=00:05:00"


def test_rounding_steps():
    assert [round_mem_mib(x) for x in (10, 700, 1025, 4097, 70000)] == [256, 768, 1536, 5120, 73728]
    assert [round_time_s(x) for x in (1, 301, 3601, 6 * 3600 + 1)] == [300, 600, 4500, 7 * 3600]
    assert fmt_duration(90061) == "1-01:01:01"
