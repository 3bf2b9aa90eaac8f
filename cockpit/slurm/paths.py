"""Read a path a job chose (StdOut, StdErr, WorkDir) only where the job's user could.

The cockpit reads logs with the operator's identity (often root over SSH); a job's user
picks its output paths (``sbatch -o /root/...``). Before such a read every component is
stat'ed (``lstat`` where the transport has it): each directory must be searchable and the
file readable by the job's uid or primary gid (``scontrol show job``: ``UserId=name(uid)``,
``GroupId=name(gid)``), no component may be a symbolic link someone other than root made,
and ``..`` is refused outright. A transport that reports no owner or mode (the demo's
in-memory files) is not checked. The read after the check can still race a user who swaps
the file; the check closes the plain way in.
"""

from __future__ import annotations

import re
import stat as stat_mod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cockpit.safety import READ, SEARCH, UnsafeValue, job_path_parts, may_access
from cockpit.transport import FileStat, RemoteFileError

if TYPE_CHECKING:
    from cockpit.slurm.source import SlurmSource

_USER_RE = re.compile(r"(?:^|\s)UserId=([^\s(]*)\((\d+)\)")
_GROUP_RE = re.compile(r"(?:^|\s)GroupId=([^\s(]*)\((\d+)\)")


@dataclass(frozen=True, slots=True)
class JobOwner:
    """Who a job runs as; ``uid`` None: not known (its paths are not read)."""

    user: str
    uid: int | None
    gid: int | None = None


class PathRefused(RemoteFileError):
    """A job-chosen path its user could not read: not read, and said so."""


def job_owner(scontrol_text: str) -> JobOwner | None:
    """The owner in ``scontrol show job -o ID`` output (one job), or None."""
    m = _USER_RE.search(scontrol_text)
    if m is None:
        return None
    g = _GROUP_RE.search(scontrol_text)
    return JobOwner(m.group(1), int(m.group(2)), int(g.group(2)) if g else None)


async def _stat(src: SlurmSource, path: str) -> FileStat:
    """lstat (stat where the transport has none), cached until the next poll."""
    hit = src._stat_cache.get(path)
    if hit is None:
        lstat = getattr(src.transport, "lstat", None)  # the Transport protocol's optional part
        hit = await (lstat(path) if lstat is not None else src.transport.stat(path))
        src._stat_cache[path] = hit
    return hit


async def check_job_path(src: SlurmSource, path: str, owner: JobOwner | None) -> None:
    """Raise PathRefused unless ``owner`` could read ``path`` (see the module doc); raises
    RemoteFileError when a component cannot be stat'ed (missing file)."""
    who = owner.user if owner is not None and owner.user else "the job's user"
    try:
        parts = job_path_parts(path)
    except UnsafeValue as exc:
        raise PathRefused(str(exc), where=path) from None
    if (await _stat(src, path)).mode is None:
        return  # this transport cannot tell owners (the demo's files): nothing to check against
    if owner is None or owner.uid is None:
        raise PathRefused(
            f"not read: {path}: the job's owner is unknown (scontrol show job)", where=path
        )
    prefix = ""
    for i, part in enumerate(parts):
        prefix += "/" + part
        st = await _stat(src, prefix)
        last = i == len(parts) - 1
        if st.mode is not None and stat_mod.S_ISLNK(st.mode):
            if st.uid != 0:
                raise PathRefused(
                    f"not read: {prefix} is a symbolic link made by uid {st.uid}", where=path
                )
            st = await src.transport.stat(prefix)  # root's link (/home -> /data/home): follow
        want = READ if last else SEARCH
        if st.mode is not None and not may_access(
            st.mode, st.uid, st.gid, owner.uid, owner.gid, want
        ):
            if last:
                raise PathRefused(f"not read: {path} is not readable by {who}", where=path)
            raise PathRefused(
                f"not read: {path} is not readable by {who} ({prefix} is closed to them)",
                where=path,
            )


def remember(cache: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """``cache[key] = value``, the oldest entries out past ``limit``."""
    cache.pop(key, None)
    cache[key] = value
    while len(cache) > limit:
        del cache[next(iter(cache))]
