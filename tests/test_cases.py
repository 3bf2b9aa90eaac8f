"""Every failure bundle in tests/fixtures/cases is a test: top cause and first red error.

Each bundle stands for a kind of fault (see its expected.toml); a failure here is fixed
in the patterns/rules for that kind, never by special-casing the bundle.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from cockpit.diagnosis.domains import DOMAINS
from cockpit.ingest.bundle import diagnose_bundle, sniff
from cockpit.model import SEVERITY_RANK

CASES = Path(__file__).parent / "fixtures" / "cases"
BUNDLES = sorted(p for p in CASES.iterdir() if (p / "expected.toml").is_file())
LABELS = set(
    re.findall(
        r"^\| `([a-z_]+)` \|",
        (Path(__file__).parent.parent / "docs" / "root-causes.md").read_text(),
        re.M,
    )
)


def _strip(s: str) -> str:
    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", s).replace("\r", "")


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("COCKPIT_STRICT_RULES", "1")  # a rule that raises fails the test


def test_there_are_bundles():
    assert len(BUNDLES) >= 26


@pytest.mark.parametrize("case", BUNDLES, ids=lambda p: p.name)
def test_bundle(case: Path):
    exp = tomllib.loads((case / "expected.toml").read_text())
    report = diagnose_bundle(str(case)).to_json()
    json.dumps(report)  # the contract is plain JSON
    assert report["findings"], "no finding at all"
    top = report["findings"][0]
    assert top["root_cause"] in {exp["root_cause"], *exp.get("also_acceptable", [])}, (
        f"top finding {top['root_cause']}: {top['title']}"
    )
    for f in report["findings"]:
        assert f["root_cause"] in LABELS, (
            f"label {f['root_cause']} missing from docs/root-causes.md"
        )
        assert set(f) == {
            "root_cause",
            "domain",
            "severity",
            "subject",
            "title",
            "explanation",
            "remedy",
            "first_seen",
            "evidence",
        }
        assert f["first_seen"] is None or f["first_seen"][:4].isdigit()
        assert f["severity"] in SEVERITY_RANK and f["title"] and "\n" not in f["title"]
        assert f["domain"] in DOMAINS
        for e in f["evidence"]:
            assert set(e) == {"file", "line", "text"}
    fe = report["first_error"]
    if not exp["first_error_file"]:
        assert fe is None
        assert all(f["severity"] != "critical" for f in report["findings"])
        return
    assert fe is not None, "no first error"
    assert (fe["file"], _strip(fe["text"])) == (
        exp["first_error_file"],
        _strip(exp["first_error_line"]),
    )
    # the line number points at that very line of the file (a GBK file's line read as GBK)
    lines = (case / fe["file"]).read_bytes().split(b"\n")
    raw = lines[fe["line"] - 1]
    try:
        shown = raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = raw.decode("gb18030", "replace")
    assert _strip(shown).rstrip() == _strip(fe["text"]).rstrip()


def test_every_bundle_says_where_it_came_from_and_what_misleads():
    for case in BUNDLES:
        exp = tomllib.loads((case / "expected.toml").read_text())
        assert exp["source_url"].startswith("https://"), case.name
        assert exp["explanation"] and isinstance(exp["noise"], list), case.name


def test_top_cause_has_evidence_with_lines():
    """What an operator clicks: the top finding of a Slurm bundle points at a file line."""
    for case in BUNDLES:
        top = diagnose_bundle(str(case)).to_json()["findings"][0]
        assert any(e["line"] for e in top["evidence"]), case.name


def test_sniff_by_content_not_name():
    sinfo_r = (
        b"REASON               USER      TIMESTAMP           NODELIST\n"
        b"Kill task failed     root      2024-01-25T15:12:23 n1\n"
    )
    assert sniff("nodes.txt", sinfo_r)[0] == "sinfo_r"
    assert (
        sniff("x.log", b"JobId=5 JobName=a\n   JobState=PENDING Reason=Priority\n")[0]
        == "scontrol_job"
    )
    assert sniff("whatever", b"Feb 22 17:46:38 node001 slurmd[13562]: error: x\n") == (
        "log",
        "journal",
    )
    assert sniff("slurm-12.out", b"hello\n") == ("log", "stdout")


def test_healthy_bundle_has_no_critical_and_no_first_error(tmp_path):
    (tmp_path / "slurm-7.out").write_text("step 1 ok\nstep 2 ok\ndone\n")
    (tmp_path / "sacct.txt").write_text(
        "JobID|JobName|Partition|State|ExitCode|ReqMem|MaxRSS|Elapsed|Timelimit|NodeList|Reason\n"
        "7|fine|debug|COMPLETED|0:0|1G||00:01:00|00:10:00|c1|None\n"
    )
    (tmp_path / "squeue.txt").write_text(
        "JOBID|PARTITION|NAME|USER|STATE|TIME|NODELIST|REASON\n"
        "7|debug|fine|u1|COMPLETED|1:00|c1|None\n"
    )
    report = diagnose_bundle(str(tmp_path)).to_json()
    assert report["first_error"] is None
    assert all(f["severity"] != "critical" for f in report["findings"])


def test_not_a_directory_is_a_user_error(tmp_path):
    from cockpit.errors import UserError

    with pytest.raises(UserError):
        diagnose_bundle(os.fspath(tmp_path / "missing"))


def test_every_label_has_a_domain_and_every_domain_is_documented():
    from cockpit.diagnosis.domains import LABEL_DOMAIN

    text = (Path(__file__).parent.parent / "docs" / "root-causes.md").read_text(encoding="utf-8")
    labels = LABELS - set(DOMAINS) - {"unrecognised_failure"}  # the domain table's rows too
    unrouted = sorted(label for label in labels if label not in LABEL_DOMAIN)
    assert not unrouted, f"labels without a domain: {unrouted}"
    assert set(LABEL_DOMAIN.values()) <= set(DOMAINS)
    for domain in DOMAINS:
        assert f"| `{domain}` |" in text


@pytest.mark.parametrize(
    "line,domain",
    [
        ("slurmstepd: error: Munge decode failed: Expired credential", "auth"),
        ("srun: error: task 0 launch failed: Slurmd could not create a batch directory", "launch"),
        ("NCCL WARN NET/IB : Got completion from peer with error 12", "network"),
        (
            "EH9999: Inner Error! rtStreamSynchronize execute failed, reason=[aicore exception]",
            "accelerator",
        ),
        ('Failed to pull image "swr.cn-north-4.myhuaweicloud.com/x/y:v2": not found', "image"),
        ("ImportError: libcudnn.so.8: cannot open shared object file", "software"),
        ("OSError: [Errno 122] Disk quota exceeded", "storage"),
        ("训练作业挂载存储失败", "storage"),
        ("ValueError: shapes (3,4) and (5,6) not aligned", "application"),
    ],
)
def test_an_unrecognised_lines_words_route_it(line, domain):
    from cockpit.diagnosis.domains import domain_of_line

    assert domain_of_line(line) == domain
