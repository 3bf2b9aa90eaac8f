"""HCCL's transport and link messages into cockpit/diagnosis/catalogue/hccl.json.

    python3 tools/catalogue/extract_hccl.py --hcomm hcomm.git

HCCL (Huawei's collective communication library, NCCL's counterpart on Ascend) prints through
``HCCL_ERROR``/``HCCL_WARNING`` into the plog, as ``[ERROR] HCCL(pid,python):<stamp>
[file.cc:line][pid][tid]<message>``. Its link layer (sockets, RoCE/RDMA, notify waits, the
connect-timeout report, heartbeats) is in ``hcomm`` (github.com/hicann/hcomm, CANN 8.5 onward;
read here from a mirror with its release tags, ``fetch github:libochao-huawei/hcomm``) at the
last tag of each release (v8.5.0, v9.0.0, v9.1.0-beta.1). Kept: messages about reaching
another rank (socket, connect, link, timeout, notify wait, heartbeat, RDMA/RoCE, TLS) that say
a timeout or a broken connection (the cause, ``nccl_communication_error``, as the EI/EJ codes
say); parameter checks, internal bookkeeping and a step that failed without saying why are
left out (the plog's own ``[ERROR] HCCL(`` pattern already makes those error lines, and the
size of the scanner's combined pattern has a ceiling).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import calls, entry, git, show_many, specific_enough, write  # noqa: E402

_LABEL = "nccl_communication_error"
TAGS = {"8.5": "v8.5.0", "9.0": "v9.0.0", "9.1": "v9.1.0-beta.1"}
FUNCS = {"HCCL_ERROR": "error", "HCCL_WARNING": "warning", "HCCL_RUN_WARNING": "warning"}
# parameter checks, bookkeeping and debug dumps: never why a job stopped
NOISE = re.compile(
    r"(?i)invalid|\bnull|nullptr|is empty|param|\bptr\b|not support|unsupported|\bdump\b|"
    r"\bmap\b|not found in|size\[|\bmalloc|\bmemcpy|memset|\bstrcpy|sprintf|\bsnprintf|"
    r"config|\benv\b|\bparse|release|destroy|\bfree\b|\bdeinit|unregister|\bclose\b|"
    r"^%s$|^\d\. |^-+|need to be|range|\bqp=|%p|rtsq|\bcall trace|offset|"
    # the op-retry and CCU/AICPU engines' own hand-shakes and dumps: a retry's bookkeeping, not
    # the link that failed (which their callers report in the plog's own words)
    r"OpRetry|\bccu|aicpu|symmetric|hccn|dump"
)
# the cause, not a context: the peer did not answer in time (a socket, a link, a notify, the
# rank table's exchange), or this rank's listening port was taken. Steps that failed without
# saying why are the plog's own pattern's, and the scanner's combined pattern has a size
# ceiling (RE2's DFA runs out of memory past ~150 kB of pattern text).
CAUSE = re.compile(
    r"(?i)(?:time ?out|timed out)[^\n]*|listen on ip\[%s\] and (?:specific )?port\[%u\] fail"
)
PEER = re.compile(r"(?i)socket|connect|\blink|notify|rank|heartbeat|establish|listen|accept")


def extract(mirror: str) -> tuple[dict[str, str], list[dict]]:
    found: dict[str, dict] = {}
    have = set(git(mirror, "tag", "--list").split())
    tags = {series: tag for series, tag in TAGS.items() if tag in have}
    for series, tag in tags.items():
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", "src").split()
        refs = [
            f"{tag}:{n}"
            for n in names
            if n.endswith((".cc", ".c", ".h", ".cpp")) and not re.search(r"(?i)test|stub", n)
        ]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for level, template, line in calls(src, FUNCS):
                template = " ".join(template.split())
                origin = f"hicann/hcomm {tag}: {path}:{line}"
                e = found.get(template)
                if e is not None:
                    if series not in e["versions"]:
                        e["versions"].append(series)
                    e["origin"] = origin
                    continue
                if level != "error" or not (PEER.search(template) and CAUSE.search(template)):
                    continue  # a failed step without its cause stays with the plog's pattern
                if NOISE.search(template) or not specific_enough(template, 20):
                    continue
                e = entry(template, level, origin, [series], "network", _LABEL)
                found[template] = e | {"program": "hccl"}
    return tags, list(found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hcomm", required=True, help="git mirror of hcomm with its release tags")
    args = ap.parse_args()
    tags, entries = extract(args.hcomm)
    if not entries:
        raise SystemExit("no HCCL_ERROR/HCCL_WARNING message kept: check the mirror and tags")
    meta = {
        "source": "hccl",
        "upstream": "https://github.com/hicann/hcomm",
        "versions": tags,
        "generator": "tools/catalogue/extract_hccl.py",
    }
    print(len(entries), "templates;", write("hccl", meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
