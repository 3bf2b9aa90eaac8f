"""MUNGE's failure messages into cockpit/diagnosis/catalogue/munge.json.

    python3 tools/catalogue/extract_munge.py /path/to/munge.git

Reads a bare git mirror of github.com/dun/munge at the releases distributions ship (0.5.13
RHEL 8 … 0.5.18): the ``munge_strerror()`` table (what Slurm prints after ``Munge decode
failed:`` and ``unmunge`` after ``Error:``) and munged's ``log_err`` / ``log_errno`` /
``log_msg`` lines at LOG_ERR and LOG_WARNING (its daemon log and journal).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, git, show_many, specific_enough, string_arg, write  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

TAGS = (
    "munge-0.5.13",
    "munge-0.5.14",
    "munge-0.5.15",
    "munge-0.5.16",
    "munge-0.5.17",
    "munge-0.5.18",
)
STRERROR = "src/libmunge/strerror.c"
_CASE = re.compile(r'case (EMUNGE_\w+):\s*return \("((?:[^"\\]|\\.)*)"\);')
_LOG = re.compile(
    r"\blog_(?:err|errno)\s*\(\s*[^,()]+,\s*(LOG_\w+)\s*,|\blog_msg\s*\(\s*(LOG_\w+)\s*,|"
    # an error that --force turns into a warning: without it munged exits
    r"\blog_err_or_warn\s*\(\s*\w+\s*,()"
)
# munged refuses an insecure path with "<what> is insecure: %s" (the logfile, keyfile, pidfile,
# socket dir), the %s being path.c's reason ("world-writable permissions without sticky bit set
# on \"/\""): one template per reason, the path's role left open
_INSECURE = re.compile(r"is insecure: %s$")
_PATH_C = "src/munged/path.c"
_PATH_REASON = re.compile(r"\b_path_set_err\s*\(\s*[^,]+,\s*[^,]+,\s*[^,]+,")
_SECURITY = re.compile(r"(?i)ownership|writable|permissions|file type")
# codes whose text alone (no "munge" near it) says a credential was refused
_CRED = {
    "EMUNGE_CRED_INVALID",
    "EMUNGE_CRED_EXPIRED",
    "EMUNGE_CRED_REWOUND",
    "EMUNGE_CRED_REPLAYED",
    "EMUNGE_CRED_UNAUTHORIZED",
    "EMUNGE_BAD_CRED",
    "EMUNGE_BAD_VERSION",
    "EMUNGE_BAD_REALM",
}
# munged's own failures that stop it authenticating (key, socket, privileges, clock); its
# allocation and hash-table internals are left out
_DAEMON_KEEP = re.compile(
    r"(?i)key ?file|credential|socket|clock|pid ?file|privilege|insecure|\broot\b|bind|seed|"
    r"unauthori[sz]ed|decode|encode|group|lock"
)
_DAEMON_NOISE = re.compile(r"(?i)allocat|hash|mutex|thread|timer|entropy|\bconf\b|dump|ptr\b")
_AUTH_WORDS = re.compile(r"(?i)credential|key ?file|unauthori[sz]ed|decode|encode|clock|skew")


def extract(mirror: str) -> list[dict]:
    found: dict[str, dict] = {}
    for tag in TAGS:
        series = tag.removeprefix("munge-")
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", "src/munged").split()
        refs = [f"{tag}:{STRERROR}"] + [f"{tag}:{n}" for n in names if n.endswith(".c")]
        sources = show_many(mirror, refs)
        reasons = _path_reasons(sources.get(f"{tag}:{_PATH_C}", ""))
        for ref, src in sources.items():
            path = ref.split(":", 1)[1]
            rows = list(_rows(path, src))
            if path == _PATH_C:  # what munged prints of an insecure path, whichever it checks
                rows += [("error", "%s is insecure: " + r, at, "") for r, at in reasons]
            for level, template, line, code in rows:
                e = found.get(template)
                if e is not None:
                    if series not in e["versions"]:  # path.c says some twice
                        e["versions"].append(series)
                    e["origin"] = f"{path}:{line}" + (f" ({code})" if code else "")
                    continue
                found[template] = _entry(level, template, f"{path}:{line}", code, series)
    return list(found.values())


def _path_reasons(src: str) -> list[tuple[str, int]]:
    """path.c's reasons a path is insecure (ownership, group/world-writable, type), with lines."""
    out = []
    for m in _PATH_REASON.finditer(src):
        got = string_arg(src, m.end())
        if got and _SECURITY.search(got[0]):
            out.append((got[0], src.count("\n", 0, m.start()) + 1))
    return out


def _rows(path: str, src: str):
    if path == STRERROR:
        for m in _CASE.finditer(src):
            if m.group(1) != "EMUNGE_SUCCESS":
                yield "errno", m.group(2), src.count("\n", 0, m.start()) + 1, m.group(1)
        return
    for m in _LOG.finditer(src):
        prio = m.group(1) or m.group(2) or "LOG_ERR"
        if prio not in ("LOG_ERR", "LOG_WARNING", "LOG_CRIT", "LOG_ALERT", "LOG_EMERG"):
            continue
        got = string_arg(src, m.end())
        t = got[0] if got else ""
        line = src.count("\n", 0, m.start()) + 1
        if _INSECURE.search(t):
            continue  # its lines are path.c's reasons' (extract: "%s is insecure: <reason>")
        if not t or "\n" in t or not specific_enough(t, 14):
            continue
        if _DAEMON_KEEP.search(t) and not _DAEMON_NOISE.search(t):
            level = "warning" if prio == "LOG_WARNING" else "error"
            yield level, got[0], line, ""


def _entry(level: str, template: str, origin: str, code: str, series: str) -> dict:
    if code:
        origin += f" ({code})"
        label = "auth_failed"
        # a short text ("Socket timeout") is MUNGE's only after a munge word on the line
        prefix = "" if code in _CRED else r"(?i:munge)[^\n]*"
        prog = "slurmd"
    else:
        # munged refusing an insecure path exits: nothing on the host authenticates
        refused = level == "error" and "insecure" in template and "PRNG" not in template
        label = "auth_failed" if _AUTH_WORDS.search(template) or refused else GENERIC
        prefix, prog = "", "munged"
    e = entry(
        template,
        level,
        origin,
        [series],
        "auth",
        label,
        REMEDY["auth"] if label == GENERIC else "",
        prefix,
    )
    return e | {"program": prog}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mirror", help="bare git mirror of github.com/dun/munge")
    args = ap.parse_args()
    entries = extract(args.mirror)
    meta = {
        "source": "munge",
        "upstream": "https://github.com/dun/munge",
        "versions": {t.removeprefix("munge-"): t for t in TAGS},
        "generator": "tools/catalogue/extract_munge.py",
    }
    print(len(entries), "templates;", write("munge", meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
