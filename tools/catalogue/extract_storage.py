"""Shared file system clients into cockpit/diagnosis/catalogue/{lustre,nfs,gpfs}.json.

    python3 tools/catalogue/extract_storage.py --lustre lustre-release.git

* ``lustre.json``: the Lustre client's console and error messages (``CERROR``, ``CNETERR``,
  ``LCONSOLE_ERROR_MSG``, ``LCONSOLE(D_ERROR, …)``, ``LCONSOLE_WARN``), what a compute node's
  dmesg shows as ``LustreError: …`` / ``Lustre: …`` / ``LNetError: …``, from the client side
  (ptlrpc, ldlm, llite, osc, mdc, lmv, lov, mgc, obdclass and LNet with its o2ib/socket
  drivers) of lustre-release at 2.12, 2.14, 2.15, 2.16 and 2.17; kept when they say something
  failed;
* ``nfs.json`` (curated): the Linux NFS/SUNRPC client's messages beyond the two
  ``not responding`` lines kernel.json has (fs/nfs, net/sunrpc, fs/lockd) and nfs-utils'
  ``mount.nfs`` errors;
* ``gpfs.json`` (curated): IBM Storage Scale (GPFS) messages an mmfs.log shows, from IBM's
  message reference (the product is closed source).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import calls, entry, git, show_many, specific_enough, write  # noqa: E402
from mapping import GENERIC, REMEDY, classify  # noqa: E402

LUSTRE_TAGS = {
    "2.12": "v2_12_9",
    "2.14": "v2_14_0",
    "2.15": "v2_15_8",
    "2.16": "v2_16_1",
    "2.17": "v2_17_0",
}
CLIENT_DIRS = (
    "lustre/ptlrpc",
    "lustre/ldlm",
    "lustre/llite",
    "lustre/osc",
    "lustre/mdc",
    "lustre/lmv",
    "lustre/lov",
    "lustre/mgc",
    "lustre/obdclass",
    "lnet/lnet",
    "lnet/klnds/o2iblnd",
    "lnet/klnds/socklnd",
)
FUNCS = {
    "CERROR": "error",
    "CNETERR": "error",
    "CEMERG": "error",
    "LCONSOLE_ERROR_MSG": "error",
    "LCONSOLE_ERROR": "error",
    "LCONSOLE_WARN": "warning",
    "LCONSOLE": "error",
}
SKIP = {"LCONSOLE_ERROR_MSG": 1, "LCONSOLE": 1}
FAIL = re.compile(
    r"(?i)fail|error|unable|cannot|can't|could not|timed? ?out|lost|evict|expired|refused|"
    r"not available|abort|unreachable|no space|quota|corrupt|denied|reset|dead|down|hung|"
    r"too many|exceed|invalid"
)
NOISE = re.compile(
    r"(?i)^(?:%s: )?(?:bad|invalid|unknown) (?:option|param|value|argument)|"
    r"usage|deprecated|debug|LBUG|ASSERT"
)

_FS = (
    "The shared file system's server stopped answering this node, or evicted it: every job "
    "doing I/O there hangs or fails. Check the node's network to the servers (lctl ping / "
    "showmount -e / mmgetstate -a), the servers' own logs, then remount or drain the node."
)
_LNET = (
    "LNet could not reach a peer over the fabric: check the node's IB/Ethernet link (ibstat, "
    "lnetctl ping <nid>) and the routers between it and the servers."
)
OPERATOR = re.compile(
    r"(?i)evict|timed? ?out|timeout|\blost\b|not responding|refused|unreachable|reconnect|"
    r"recovery|expired|\bhung\b|\bdown\b|no space|quota|read-only|i/o error|took too long|"
    r"not available|network|link"
)


def level_console(src: str, line: int) -> bool:
    """Whether the call at ``line`` is a console message (LCONSOLE*), which dmesg always shows."""
    text = src.split("\n", line)[line - 1] if line > 0 else ""
    return "LCONSOLE" in text


RULES: tuple[tuple[str, str, str, str], ...] = (
    (r"(?i)\bdeadline\b", "storage", GENERIC, _FS),
    (r"(?i)no space left|ENOSPC|rc = -28\b", "storage", "disk_full", ""),
    (r"(?i)quota exceeded|over quota|EDQUOT|rc = -122\b", "storage", "disk_quota_exceeded", ""),
    (r"(?i)quota|no space", "storage", GENERIC, REMEDY["storage"]),
    (
        r"(?i)was evicted|evicting client|evicted by|connection to .* was lost|not available for "
        r"connect|lock callback timer expired|lost (?:its )?connection|server .* not responding|"
        r"lease (?:expired|renewal)|check lease failed|clientid is in use|quorum|lost membership|"
        r"shutting down abnormally",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (r"(?i)read-only", "storage", "storage_read_only", ""),
    (r"(?i)permission denied|access denied", "storage", "storage_access_denied", ""),
)
_RULES = tuple((re.compile(rx), d, lab, rem) for rx, d, lab, rem in RULES)


def map_template(template: str, default_domain: str) -> tuple[str, str, str]:
    for rx, domain, label, remedy in _RULES:
        if rx.search(template):
            return domain, label, remedy
    domain, label = classify(template, default_domain)
    if label != GENERIC:
        return domain, label, ""
    return domain, label, _LNET if domain == "network" else REMEDY.get(domain, "")


def lustre_entries(mirror: str) -> list[dict]:
    found: dict[str, dict] = {}
    for series, tag in LUSTRE_TAGS.items():
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", *CLIENT_DIRS).split()
        refs = [f"{tag}:{n}" for n in names if n.endswith((".c", ".h"))]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for level, template, line in calls(src, FUNCS, SKIP):
                template = template.rstrip("\n").strip()
                origin = f"lustre/lustre-release {tag}: {path}:{line}"
                e = found.get(template)
                if e is not None:
                    if series not in e["versions"]:
                        e["versions"].append(series)
                    e["origin"] = origin
                    continue
                if "\n" in template or not specific_enough(template, 18):
                    continue
                if not FAIL.search(template) or NOISE.search(template):
                    continue
                # the console messages, and those error lines an operator acts on: not every
                # CERROR of the client's internals (allocation, llog, parameter parsing)
                if not level_console(src, line) and not OPERATOR.search(template):
                    continue
                if "llog_test" in path or "test failed" in template:
                    continue
                domain, label, remedy = map_template(
                    template, "network" if path.startswith("lnet/") else "storage"
                )
                e = entry(template, level, origin, [series], domain, label, remedy)
                found[template] = e | {"program": "lustre"}
    return list(found.values())


LINUX_V = ["4.18", "5.14", "5.15", "6.1", "6.8"]
NFS: list[tuple[str, str, str, str, str]] = [
    # (template, origin, domain, label, remedy)
    (
        "lockd: server %s not responding, still trying",
        "torvalds/linux: net/sunrpc/clnt.c (call_timeout, the lockd program)",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (
        "NFS: Server %s reports our clientid is in use",
        "torvalds/linux: fs/nfs/nfs4state.c",
        "storage",
        "shared_fs_unreachable",
        "Two clients present the same NFSv4 client id (cloned nodes or containers with the same "
        "hostname): give each node a unique nfs4_unique_id / hostname, then remount.",
    ),
    (
        "NFS: state manager%s%s failed on NFSv4 server %s with error %d",
        "torvalds/linux: fs/nfs/nfs4state.c",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (
        "NFS: server %s error: fileid changed",
        "torvalds/linux: fs/nfs/inode.c",
        "storage",
        GENERIC,
        "The server's export changed under the client (a failover, a re-export): "
        "remount the file system on the node.",
    ),
    (
        "%s: connect returned unhandled error %d",
        "torvalds/linux: net/sunrpc/xprtsock.c (xs_tcp_setup_socket)",
        "storage",
        GENERIC,
        _FS,
    ),
    (
        "mount.nfs: access denied by server while mounting %s",
        "nfs-utils: utils/mount/error.c",
        "storage",
        "storage_access_denied",
        "The server's exports do not allow this node: "
        "exportfs -v on the server (the node's address or subnet, sec= options).",
    ),
    (
        "mount.nfs: Connection timed out",
        "nfs-utils: utils/mount/error.c",
        "storage",
        "storage_mount_failed",
        "",
    ),
]
NFS_UTILS_V = ["2.3", "2.5", "2.6"]

GPFS_V = ["5.1", "5.2"]
_SCALE = "https://www.ibm.com/docs/en/storage-scale/"
GPFS: list[tuple[str, str, str, str, str]] = [
    (
        "The mmfs daemon is shutting down abnormally.",
        _SCALE + "5.2.0?topic=issues-gpfs-daemon-went-down (6027-650 [X])",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (
        "File system is read-only.",
        _SCALE + "6.0.1?topic=errors-gpfs-error-messages-application-program (6027-695 [E])",
        "storage",
        "storage_read_only",
        "",
    ),
]


def curated(rows, program: str, versions: list[str]) -> list[dict]:
    out = []
    for template, origin, domain, label, remedy in rows:
        if origin.startswith("nfs-utils"):
            program, versions = "nfs", [f"nfs-utils {v}" for v in NFS_UTILS_V]
        if label == GENERIC and not remedy:
            remedy = REMEDY[domain]
        out.append(
            entry(template, "error", origin, versions, domain, label, remedy) | {"program": program}
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lustre", required=True, help="mirror of github.com/lustre/lustre-release")
    args = ap.parse_args()
    gen = "tools/catalogue/extract_storage.py"
    lustre = lustre_entries(args.lustre)
    meta = {
        "source": "lustre",
        "upstream": "https://github.com/lustre/lustre-release",
        "versions": LUSTRE_TAGS,
        "generator": gen,
    }
    print(len(lustre), "templates;", write("lustre", meta, lustre))
    meta = {
        "source": "nfs",
        "upstream": "https://github.com/torvalds/linux",
        "also": {
            "nfs-utils": "git://git.linux-nfs.org/projects/steved/nfs-utils.git "
            + ", ".join(NFS_UTILS_V)
        },
        "versions": dict.fromkeys(LINUX_V + [f"nfs-utils {v}" for v in NFS_UTILS_V], "release"),
        "generator": gen,
        "curated": True,
    }
    rows = curated(NFS, "kernel", LINUX_V)
    print(len(rows), "templates;", write("nfs", meta, rows))
    # closed source: the upstream is IBM's message reference
    meta = {
        "source": "gpfs",
        "upstream": _SCALE,
        "versions": dict.fromkeys(GPFS_V, "release"),
        "generator": gen,
        "curated": True,
    }
    rows = curated(GPFS, "gpfs", GPFS_V)
    print(len(rows), "templates;", write("gpfs", meta, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
