"""NCCL's WARN lines into cockpit/diagnosis/catalogue/nccl.json.

    python3 tools/catalogue/extract_nccl.py /path/to/nccl.git

Reads a bare git mirror of github.com/NVIDIA/nccl at the newest tag of each minor release
from 2.18 (PyTorch 2.1) to 2.29 and collects the format strings of ``WARN(...)`` (printed as
``host:pid:tid [dev] NCCL WARN <message>``) about the network, the transports, the bootstrap,
the proxy and CUDA; parameter parsing and topology-file noise are left out. Every NCCL WARN
line already reads as ``nccl_communication_error`` in the engine; the catalogue adds which
message it is, where it comes from and, for CUDA's own failures, the accelerator domain.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import calls, entry, git, show_many, specific_enough, write  # noqa: E402

FIRST, LAST = (2, 18), (2, 29)
KEEP = re.compile(
    r"(?i)\bnet\b|net/|\bib\b|ibv_|socket|connect|timeout|timed out|proxy|abort|peer|remote|"
    r"bootstrap|p2p|shm|nvls|collnet|cuda|nvml|\bgdr|rdma|\bqp\b|completion|async|transport|"
    r"\bsend|\brecv|receive|listen|accept|poll|ring|tree|plugin|\bmem\w*|alloc|out of memory"
)
NOISE = re.compile(
    r"(?i)invalid value|\benv\b|environment|NCCL_\w+=|ignoring|\bparse|xml|unknown (?:option|"
    r"param)|deprecated|graph file|tuner|profiler|\bdump|\bstring\b|\bbuffer too small"
)
FAIL = re.compile(
    r"(?i)fail|error|timeout|timed out|abort|unable|cannot|can't|could not|couldn't|refused|"
    r"reset|closed|not found|no usable|mismatch|out of memory"
)
_CUDA = re.compile(r"(?i)\bcuda\b|cudaMalloc|cuMem|\bcu[A-Z]\w+ failed|nvml")


def last_tags(mirror: str) -> dict[str, str]:
    out: dict[str, tuple[int, str]] = {}
    for tag in git(mirror, "tag", "--list", "v2.*").split():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)-1", tag)
        if not m:
            continue
        minor = (int(m.group(1)), int(m.group(2)))
        if FIRST <= minor <= LAST:
            key = f"{minor[0]}.{minor[1]}"
            if key not in out or int(m.group(3)) > out[key][0]:
                out[key] = (int(m.group(3)), tag)
    return {k: t for k, (_, t) in sorted(out.items(), key=lambda kv: float(kv[0]))}


def extract(mirror: str) -> tuple[dict[str, str], list[dict]]:
    tags = last_tags(mirror)
    found: dict[str, dict] = {}
    for series, tag in sorted(tags.items(), key=lambda kv: [int(x) for x in kv[0].split(".")]):
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", "src").split()
        refs = [f"{tag}:{n}" for n in names if n.endswith((".cc", ".c", ".h", ".cu"))]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for _, template, line in calls(src, {"WARN": "warn"}):
                template = template.rstrip("\n")
                e = found.get(template)
                if e is not None:
                    e["versions"].append(series)
                    e["origin"] = f"{path}:{line}"
                    continue
                if "\n" in template or not specific_enough(template, 14):
                    continue
                if "/os/windows" in path or not FAIL.search(template):
                    continue
                if not KEEP.search(template) or NOISE.search(template):
                    continue
                domain = "accelerator" if _CUDA.search(template) else "network"
                # the engine reads every "NCCL WARN" line as a collective failure: the label
                # stays that; the domain says where a CUDA failure belongs
                e = entry(
                    template,
                    "warn",
                    f"{path}:{line}",
                    [series],
                    domain,
                    "nccl_communication_error",
                    prefix=r"NCCL WARN [^\n]*?",
                )
                found[template] = e | {"program": "nccl"}
    return tags, list(found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mirror", help="bare git mirror of github.com/NVIDIA/nccl")
    args = ap.parse_args()
    tags, entries = extract(args.mirror)
    meta = {
        "source": "nccl",
        "upstream": "https://github.com/NVIDIA/nccl",
        "versions": tags,
        "generator": "tools/catalogue/extract_nccl.py",
    }
    print(len(entries), "templates;", write("nccl", meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
