"""The diagnosis engine speaks Chinese: every finding's title, explanation, remedy and the
evidence lines it wrote itself, over every failure bundle and the whole demo site, hold no
English prose in Chinese, and state the same facts (cause ids, subjects, job ids, the
deciding numbers) as in English.

English prose is found by :func:`english_prose`: a run of three or more plain lower-case
English words left once the facts are taken out (quoted text, commands, options, paths,
``key=value`` pairs, and any words that also appear in the finding's quoted evidence lines or
the bundle's own files, which the explanation may quote as the platform printed them). An
evidence line the engine wrote (``Evidence.quoted`` False: "pool p: 2 node(s) fit", "vs good
run ...") is the engine's own text, no quotation: it excuses nothing and is checked itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from cockpit import i18n
from cockpit.cli import main
from cockpit.diagnosis.catalogue.babel_extract import extract_catalogue, human_texts
from cockpit.ingest.bundle import diagnose_bundle
from cockpit.model import Finding

from .i18n_support import demo_platform_text, written_out

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).parent / "fixtures" / "cases"
ENGINE_PO = ROOT / "cockpit/locale/zh_CN/LC_MESSAGES/engine.po"
CATALOGUE_JSON = sorted((ROOT / "cockpit/diagnosis/catalogue").glob("*.json"))
BUNDLES = sorted(p for p in CASES.iterdir() if (p / "expected.toml").is_file())
TEXT_FIELDS = ("title", "explanation", "remedy")

# Programs whose command lines a remedy gives as they are typed: from such a word to the end
# of its clause the text is a command, not prose.
COMMANDS = (
    "scontrol sacct sacctmgr squeue sinfo sprio sdiag sshare scancel sbatch srun salloc sstat "
    "sreport strigger systemctl journalctl dmesg df du quota lfs mmlsquota ls cat grep tail "
    "nvidia-smi npu-smi dcgmi ibstat ibv_devinfo ip ping ssh munge unmunge chronyc kubectl "
    "docker crictl pip conda python python3 torchrun mpirun ulimit free top ps kill mount "
    "umount findmnt stat hccn_tool ascend-dmi obsutil ma-cli sort uniq head wc"
).split()
_COMMAND = re.compile(
    r"(?<![\w./-])(?:" + "|".join(re.escape(c) for c in COMMANDS) + r")\b[^;；，。,()（）\n]*"
)
# quoted or code-like pieces: facts as the platform prints them
_FACTS = re.compile(
    r"`[^`]*`|\"[^\"]*\"|'[^']*'|“[^”]*”|‘[^’]*’|<[^<>]*>"
    r"|\S*[=/_.:@\\]\S*"  # key=value, paths, file names, labels, host:port
    r"|--?[\w-]+"  # options
)
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def english_prose(text: str, quoted: str = "") -> list[str]:
    """The runs of 3+ lower-case English words in ``text`` that are prose, not facts.
    ``quoted``: text the finding may quote verbatim (its evidence lines, the bundle's files);
    a run found in it is a quotation, not the cockpit's own English."""
    quoted_low = " ".join(quoted.lower().split())
    out = []
    # clauses: Chinese text and punctuation end a run of English words
    for clause in re.split(r"[;；。，,:：()（）\[\]【】!?！？\n]|" + _CJK.pattern, text):
        clause = _COMMAND.sub(" ", clause)
        clause = _FACTS.sub(" | ", clause)
        run: list[str] = []
        for tok in clause.split() + ["|"]:
            if _WORD.fullmatch(tok) and tok.islower() and len(tok) > 1 or tok in ("a",):
                run.append(tok)
                continue
            if len(run) >= 3:
                phrase = " ".join(run)
                if phrase.lower() not in quoted_low:
                    out.append(phrase)
            run = []
    return out


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        ("永远不会运行: 64 CPUs > MaxCPUsPerNode 48", []),
        ("never runs: 64 CPUs > MaxCPUsPerNode 48", []),  # two words are not a sentence
        ("作业 48101 can never start in partition cpu", ["can never start in partition cpu"]),
        ("Lower the request to fit (e.g. --mem)", ["the request to fit"]),
        (
            "检查节点: scontrol show node cn013; 然后 scontrol update NodeName=cn013 State=RESUME",
            [],
        ),
        ("用 `squeue --start -j 48101` 查看预计开始时间", []),
        ("查看 slurmd.log 和 dmesg", []),
        ("sacct -j 123 -o JobID,State,ExitCode 显示是哪个作业步失败", []),
        ("第一个红色错误: error: unable to open file", []),  # quoted from the evidence below
        ("the node is the cause, not the job", ["the node is the cause", "not the job"]),
        ("节点 gpu-node-07 上 the out of memory killer", ["the out of memory killer"]),
    ],
)
def test_the_detector(text, prose):
    assert english_prose(text, quoted="slurmd: error: Unable to open file /x") == prose


# ------------------------------------------------------------------ running the engine twice


def _bundle_findings(case: Path, lang: str) -> tuple[list[dict], tuple[Finding, ...]]:
    """The findings as JSON and as the engine made them (which evidence it quoted)."""
    i18n.set_language(lang)
    try:
        report = diagnose_bundle(str(case))
        return report.to_json()["findings"], report.findings
    finally:
        i18n.set_language("en")


def _bundle_text(case: Path) -> str:
    out = []
    for p in sorted(case.rglob("*")):
        if p.is_file() and p.name != "expected.toml" and p.stat().st_size < 2_000_000:
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def _cli_json(capsys, argv: list[str], found: list[Finding] | None = None) -> dict | list:
    """The command's JSON; ``found``: filled with the findings it wrote, in order."""
    try:
        with written_out() as got:
            main(argv)
    finally:
        i18n.set_language("en")
    if found is not None:
        found[:] = got
    return json.loads(capsys.readouterr().out)


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_TOKEN = re.compile(
    r"\b(?:[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}[A-Z_]*)\b"  # Slurm settings, states, reason codes
    r"|\b\w+=[^\s,;)\u3000-\u9fff\uff00-\uffef]+"  # Reason=…, JobId=… (to a CJK stop)
    r"|--[\w-]+"  # options
)


def facts(text: str, live: bool = False) -> set[str]:
    """The facts a text states that must read the same in any language. ``live``: two runs
    of the demo a moment apart, whose storage figures drift (49807.2 GiB free, then 49807.3):
    the whole numbers still must agree, not the fractions."""
    if live:
        text = re.sub(r"\b(\d+)\.\d+\b", r"\1", text)
    # a sentence's full stop is not part of the fact (State=RESUME. / State=RESUME。)
    return set(_NUMBER.findall(text)) | {t.rstrip(".") for t in _TOKEN.findall(text)}


def _compare(
    en: list[dict],
    zh: list[dict],
    zh_found: list[Finding] | tuple[Finding, ...],
    quoted: str,
    where: str,
    live: bool = False,
    platform: str = "",
) -> list[str]:
    """What is wrong with the Chinese findings against the English ones. ``zh_found``: the
    Chinese findings as the engine made them (which evidence lines it quoted, which it
    wrote); ``platform``: what the site's platform prints, which an evidence line the engine
    wrote may embed (a node's reason, an event's message, a log line)."""
    bad = []
    assert [f["root_cause"] for f in en] == [f["root_cause"] for f in zh], where
    assert [f["subject"] for f in en] == [f["subject"] for f in zh], where
    for e, z, found in zip(en, zh, zh_found, strict=True):
        assert len(found.evidence) == len(z["evidence"]), where
        said = "\n".join(x.text for x in found.evidence if x.quoted)
        ev = quoted + "\n" + said
        for field in TEXT_FIELDS:
            for phrase in english_prose(z[field], ev):
                bad.append(f"{where} {z['root_cause']} {field}: {phrase!r} in {z[field]!r}")
            lost = facts(e[field], live) - facts(z[field], live)
            if lost:
                bad.append(f"{where} {z['root_cause']} {field}: lost {sorted(lost)} {z[field]!r}")
        # the evidence lines the engine wrote: Chinese prose, and the English line's facts when
        # both runs have the same lines (a live demo may add one between them; its numbers, a
        # file system's used MiB, drift between the two runs: then its words and fields count)
        same = [x["file"] for x in e["evidence"]] == [x["file"] for x in z["evidence"]]
        told = lambda t: {f for f in facts(t, live) if not live or not _NUMBER.fullmatch(f)}  # noqa: E731
        for i, (x, xz) in enumerate(zip(found.evidence, z["evidence"], strict=True)):
            if x.quoted:
                continue
            label = f"{where} {z['root_cause']} evidence {xz['file']}"
            for phrase in english_prose(xz["text"], ev + "\n" + platform):
                bad.append(f"{label}: {phrase!r} in {xz['text']!r}")
            lost = told(e["evidence"][i]["text"]) - told(xz["text"]) if same else ()
            if lost:
                bad.append(f"{label}: lost {sorted(lost)} {xz['text']!r}")
    return bad


@pytest.mark.parametrize("case", BUNDLES, ids=lambda p: p.name)
def test_bundle_in_chinese(case: Path):
    (en, _), (zh, found) = _bundle_findings(case, "en"), _bundle_findings(case, "zh")
    bad = _compare(en, zh, found, _bundle_text(case), case.name)
    assert not bad, f"{len(bad)} English or lost facts:\n" + "\n".join(bad[:10])


def test_demo_site_in_chinese(capsys):
    """``cockpit diagnose --demo --json``: every finding of every subject of the demo site."""
    en = _cli_json(capsys, ["diagnose", "--demo", "--json", "--lang", "en"])
    found: list[Finding] = []
    zh = _cli_json(capsys, ["diagnose", "--demo", "--json", "--lang", "zh"], found)
    assert len(zh["findings"]) > 50
    platform = demo_platform_text()
    bad = _compare(en["findings"], zh["findings"], found, "", "demo", True, platform)
    # the jobs of one failure are one incident in either language (the incident grouping strips
    # per-job facts from titles: it must read the Chinese titles as well as the English)
    groups = lambda out: sorted(  # noqa: E731
        (i["root_cause"], i["subject"], tuple(i["affected"])) for i in out["incidents"]
    )
    assert groups(zh) == groups(en)
    for i in zh["incidents"]:
        bad += [f"incident {i['key']}: {p!r}" for p in english_prose(i["title"])]
    assert not bad, f"{len(bad)} English or lost facts:\n" + "\n".join(bad[:12])


def test_demo_snapshot_verdicts_in_chinese(capsys):
    """``cockpit snapshot --demo --json``: the verdict of every job, node and training job."""
    en = _cli_json(capsys, ["snapshot", "--demo", "--json", "--lang", "en"])
    zh = _cli_json(capsys, ["snapshot", "--demo", "--json", "--lang", "zh"])
    bad = []
    for s_en, s_zh in zip(en, zh, strict=True):
        v_en, v_zh = s_en["verdicts"], s_zh["verdicts"]
        assert [v["root_cause"] for v in v_en] == [v["root_cause"] for v in v_zh]
        for e, z in zip(v_en, v_zh, strict=True):
            where = f"{z['subject']['kind']} {z['subject']['id']} {z['root_cause']}"
            bad += [f"{where}: {p!r} in {z['title']!r}" for p in english_prose(z["title"])]
            lost = facts(e["title"], True) - facts(z["title"], True)
            if lost:
                bad.append(f"{where}: lost {sorted(lost)} in {z['title']!r}")
    assert not bad, f"{len(bad)} verdicts:\n" + "\n".join(bad[:12])


# ------------------------------------------------------------------ the failure catalogue's JSON


def test_catalogue_texts_have_chinese():
    """Every remedy/meaning/cause of the failure catalogue's JSON (which Babel reads through
    cockpit.diagnosis.catalogue.babel_extract, mapped in babel.cfg) has its Chinese in
    engine.po: a producer's catalogue added or regenerated with new remedies fails here until
    scripts/i18n.sh engine has run and the new texts are translated."""
    with open(ENGINE_PO, "rb") as fh:
        po = read_po(fh)
    translated = {m.id for m in po if m.id and m.string and not m.fuzzy}
    texts = {t for path in CATALOGUE_JSON for t in human_texts(json.loads(path.read_text()))}
    assert len(texts) > 20
    missing = sorted(texts - translated)
    assert not missing, f"{len(missing)} catalogue texts without Chinese: {missing[:5]}"


def test_catalogue_extractor_reads_what_babel_needs(tmp_path):
    """The Babel method yields each distinct text once, with the line it is first on."""
    f = tmp_path / "x.json"
    f.write_text(
        json.dumps(
            {
                "templates": [
                    {"template": "a %s", "remedy": "Check the mount."},
                    {"template": "b", "remedy": "Check the mount.", "meaning": "The disk is full."},
                    {"template": "c", "remedy": ""},
                ]
            },
            indent=1,
        )
    )
    with open(f, "rb") as fh:
        got = list(extract_catalogue(fh, [], [], {}))
    assert [(m, fn) for _line, fn, m, _c in got] == [
        ("Check the mount.", None),
        ("The disk is full.", None),
    ]
    lines = f.read_text().splitlines()
    assert "Check the mount." in lines[got[0][0] - 1]
    assert "The disk is full." in lines[got[1][0] - 1]


def test_demo_drilldowns_in_chinese(capsys):
    """``cockpit diagnose JOB --demo --cluster demo-hpc --json`` (one job of every cause the
    demo's jobs have) and ``--training-job ID`` for every training job with a verdict: the
    drill-down's own findings (with the job's sacct rows and logs) in Chinese hold no English
    prose and the facts of the English run."""
    snap = _cli_json(capsys, ["snapshot", "--demo", "--json", "--lang", "en"])
    verdicts = [v for s in snap for v in s["verdicts"]]
    jobs = {}
    for v in verdicts:
        if v["subject"]["kind"] == "job":
            jobs.setdefault(v["root_cause"], v["subject"]["id"])
    training = sorted(
        {v["subject"]["id"] for v in verdicts if v["subject"]["kind"] == "training_job"}
    )
    assert len(jobs) >= 10 and len(training) >= 8
    runs = [["diagnose", j, "--demo", "--cluster", "demo-hpc", "--json"] for j in jobs.values()]
    runs += [
        ["diagnose", "--training-job", t, "--modelarts", "demo-modelarts", "--demo", "--json"]
        for t in training
    ]
    bad = []
    causes = lambda out: [(f["root_cause"], f["subject"]) for f in out["findings"]]  # noqa: E731
    platform = demo_platform_text()
    for argv in runs:
        en = _cli_json(capsys, [*argv, "--lang", "en"])
        found: list[Finding] = []
        zh = _cli_json(capsys, [*argv, "--lang", "zh"], found)
        if causes(en) != causes(zh):  # the demo's clock moved past a threshold between them
            en = _cli_json(capsys, [*argv, "--lang", "en"])
        assert en["findings"], argv
        where = " ".join(argv[1:4])
        bad += _compare(en["findings"], zh["findings"], found, "", where, True, platform)
    assert not bad, f"{len(bad)} English or lost facts:\n" + "\n".join(bad[:12])


def test_stored_findings_keep_quoted_evidence_apart():
    """An incident kept in the store or the alert history and read back (the TUI reopens it,
    ``cockpit alerts`` lists it) still tells a quoted log line from a line the engine wrote,
    so a Chinese screen of it is checked as one of a live finding; an alert history written
    before the flag reads its evidence as the engine's."""
    from cockpit.model import Evidence, Incident, Subject
    from cockpit.store.codec import incident_from_json, incident_to_json
    from cockpit.watch.alerts import finding_from_json, finding_to_json

    said = Evidence("pool nodes", "pool p: 2 node(s) fit", tier=1)
    line = Evidence("slurmd.log", "error: Unable to open file", line=3, tier=1, quoted=True)
    f = Finding("disk_full", "critical", Subject("node", "c", "cn01"), "t", evidence=(said, line))
    assert finding_from_json(finding_to_json(f)).evidence == (said, line)
    inc = Incident("k", "disk_full", "critical", f.subject, "t", findings=(f,))
    assert incident_from_json(incident_to_json(inc)).findings[0].evidence == (said, line)
    old = finding_to_json(f)
    for e in old["evidence"]:
        del e["quoted"]
    assert [e.quoted for e in finding_from_json(old).evidence] == [False, False]
