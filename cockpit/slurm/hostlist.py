"""Slurm hostlist expressions: ``c[1-3,5],gpu[01-02]`` <-> ``c1 c2 c3 c5 gpu01 gpu02``.

Same grammar as ``scontrol show hostnames`` / ``scontrol show hostlist``: comma
separated items outside brackets, each item may carry several ``[ranges]`` whose
zero padding is kept (``gpu[01-02]`` gives ``gpu01``). Written by hand because it is
tiny and the cockpit must not shell out per node list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cockpit.errors import ParseError

MAX_HOSTS = 100_000  # refuse absurd expansions (c[1-999999999]) instead of eating memory


def _split_top(expr: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ParseError(f"unbalanced ']' in hostlist {expr!r}", where="hostlist")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ParseError(f"unbalanced '[' in hostlist {expr!r}", where="hostlist")
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _expand_ranges(body: str, expr: str) -> list[str]:
    out: list[str] = []
    for rng in body.split(","):
        rng = rng.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", rng)
        if not m:
            raise ParseError(f"bad range {rng!r} in hostlist {expr!r}", where="hostlist")
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise ParseError(f"descending range {rng!r} in hostlist {expr!r}", where="hostlist")
        if hi - lo >= MAX_HOSTS:
            raise ParseError(f"range {rng!r} too large in hostlist {expr!r}", where="hostlist")
        width = len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0
        out.extend(str(i).zfill(width) for i in range(lo, hi + 1))
    return out


def _expand_item(item: str, expr: str) -> list[str]:
    start = item.find("[")
    if start < 0:
        return [item]
    end = item.find("]", start)
    prefix, body, rest = item[:start], item[start + 1 : end], item[end + 1 :]
    tails = _expand_item(rest, expr) if rest else [""]
    out = [prefix + num + tail for num in _expand_ranges(body, expr) for tail in tails]
    if len(out) > MAX_HOSTS:
        raise ParseError(f"hostlist {expr!r} expands to too many hosts", where="hostlist")
    return out


def expand(expr: str) -> tuple[str, ...]:
    """Expand a hostlist expression into node names, in order, duplicates kept.

    ``""`` and Slurm's ``(null)``/``None`` give ``()``. Raises ParseError on unbalanced
    brackets or malformed ranges.
    """
    expr = (expr or "").strip()
    if expr in ("", "(null)", "None", "N/A"):
        return ()
    hosts: list[str] = []
    for item in _split_top(expr):
        hosts.extend(_expand_item(item, expr))
    return tuple(hosts)


_TAIL_NUM = re.compile(r"^(.*?)(\d+)$")


def compress(hosts: Iterable[str]) -> str:
    """Compact node names into a hostlist (``c1 c2 c3 c5`` -> ``c[1-3,5]``).

    Order of first appearance of each prefix is kept; numbers are sorted within a
    prefix; names with different zero padding are kept in separate groups.
    """
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    order: list[tuple[str, int] | str] = []
    hosts = list(hosts)
    # the widths of zero-padded numbers per prefix: gpu10 belongs with gpu01-gpu09 (width 2),
    # not in a group of its own (gpu[01-09],gpu[10-16] is gpu[01-16])
    padded: dict[str, set[int]] = {}
    for h in hosts:
        m = _TAIL_NUM.match(h)
        if m and m.group(2).startswith("0") and len(m.group(2)) > 1:
            padded.setdefault(m.group(1), set()).add(len(m.group(2)))
    for h in hosts:
        m = _TAIL_NUM.match(h)
        if not m:
            if h not in plain:
                plain.append(h)
                order.append(h)
            continue
        prefix, num = m.group(1), m.group(2)
        width = len(num) if num.startswith("0") and len(num) > 1 else 0
        if not width and len(num) in padded.get(prefix, ()):
            width = len(num)
        key = (prefix, width)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(num))
    parts: list[str] = []
    for key in order:
        if isinstance(key, str):
            parts.append(key)
            continue
        prefix, width = key
        nums = sorted(set(groups[key]))
        if len(nums) == 1:
            parts.append(f"{prefix}{str(nums[0]).zfill(width)}")
            continue
        ranges: list[str] = []
        lo = prev = nums[0]
        for n in [*nums[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            a, b = str(lo).zfill(width), str(prev).zfill(width)
            ranges.append(a if lo == prev else f"{a}-{b}")
            if n is not None:
                lo = prev = n
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)
