"""One pass that says a text holds none of the secret patterns, before the patterns run.

:func:`cockpit.safety.redact` runs ~28 ``re`` patterns in turn over every string; on the short
texts of findings (titles, explanations) that is ~50 us a string, and a busy site's store
re-encodes hundreds of changed findings a poll (#33). RE2 runs all of them at once as one DFA
pass (~2 us). RE2 has no lookarounds or back references, so the prefilter is built from the
patterns' parse trees with every lookaround dropped and every back reference replaced by a copy
of its group: each change widens what matches, so a text the prefilter rejects is one no pattern
matches, and the patterns' own ``sub`` runs on the rest as before. The answer is the same.

It is asked only about ASCII text, where RE2's ``\\b``, ``\\d``, ``\\w`` and case folding are
Python's (``\\s`` is spelled out as Python's set); other text goes through the patterns alone.
Without the ``re2`` module, or for a pattern it cannot translate, :func:`build` returns None and
every text goes through the patterns (the redaction does not depend on it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

# Python's \s for str patterns: str.isspace() (ASCII text meets only the first part)
_SPACE = "\\t\\n\\x{b}\\f\\r \\x{1c}-\\x{1f}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}"
_SPACE += "\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"
_CLASS = {"CATEGORY_DIGIT": "0-9", "CATEGORY_WORD": "0-9A-Za-z_", "CATEGORY_SPACE": _SPACE}
_AT_LEAST = {"CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD", "CATEGORY_NOT_SPACE"}


class _Untranslatable(Exception):
    pass


def _char(c: int) -> str:
    ch = chr(c)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{c:x}}}"


def _category(name: str) -> str:
    negate = "_NOT_" in name
    base = _CLASS.get(name.replace("_NOT_", "_"))
    if base is None:
        raise _Untranslatable(name)
    return f"[{'^' if negate else ''}{base}]"


def _in_class(items: list[tuple[Any, Any]]) -> str:
    negate, parts = False, []
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            parts.append(_char(av))
        elif name == "RANGE":
            parts.append(f"{_char(av[0])}-{_char(av[1])}")
        elif name == "CATEGORY" and "_NOT_" not in str(av) and str(av) in _CLASS:
            parts.append(_CLASS[str(av)])
        elif name == "CATEGORY" and str(av) in _AT_LEAST and not negate:
            # \S in a class ([\S] is how re parses \S+): one category, said exactly;
            # beside other members, any character (wider)
            if len(items) == 1:
                return _category(str(av))
            return "."
        else:
            raise _Untranslatable(f"{name} {av} in a class")
    return f"[{'^' if negate else ''}{''.join(parts)}]"


_AT = {"AT_BOUNDARY": "\\b", "AT_NON_BOUNDARY": "\\B", "AT_END_STRING": "\\z"}
_AT |= {"AT_BEGINNING_STRING": "\\A", "AT_BEGINNING": "\\A"}


class _Writer:
    """A parse tree of ``re`` (``re._parser``) written back as RE2 syntax, widened."""

    def __init__(self) -> None:
        self.groups: dict[int, str] = {}

    def seq(self, items: Iterable[tuple[Any, Any]]) -> str:
        return "".join(self.item(op, av) for op, av in items)

    def item(self, op: Any, av: Any) -> str:
        name = str(op)
        if name == "LITERAL":
            return _char(av)
        if name == "NOT_LITERAL":
            return f"[^{_char(av)}]"
        if name == "ANY":
            return "."  # the patterns are compiled with re.S: (?s) below
        if name == "IN":
            return _in_class(av)
        if name == "CATEGORY":
            return _category(str(av))
        if name == "AT":
            at = _AT.get(str(av))
            if at is None:
                raise _Untranslatable(str(av))
            return at
        if name in ("ASSERT", "ASSERT_NOT"):
            return ""  # a lookaround only narrows: without it, more texts match
        if name == "BRANCH":
            return "(?:" + "|".join(self.seq(b) for b in av[1]) + ")"
        if name == "SUBPATTERN":
            group, add, delete, sub = av
            flags = ("i" if add & re.I else "") + ("-i" if delete & re.I else "")
            inner = self.seq(sub)
            if group is not None:
                self.groups[group] = inner
            return f"(?{flags}:{inner})"
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av  # greed does not change whether a match exists
            # a long bounded run ({0,256}: RE2 makes 256 copies of it, ~3 MB for the set) is
            # unbounded here: wider, and the program a few hundred KB
            top = "" if hi > 16 else str(hi)
            return f"(?:{self.seq(sub)}){{{lo},{top}}}"
        if name == "GROUPREF":
            if av not in self.groups:
                raise _Untranslatable("a reference before its group")
            return f"(?:{self.groups[av]})"  # whatever the group could match: wider
        raise _Untranslatable(name)


def translate(pattern: str) -> str:
    """``pattern`` (``re`` syntax, compiled with ``re.S``) as an RE2 pattern matching at least
    every text it matches among ASCII texts; raises ValueError when it cannot."""
    import re._parser as parser  # the stdlib's own parse: what the patterns mean to ``re``

    try:
        tree = parser.parse(pattern, re.S)
        body = _Writer().seq(tree)
    except _Untranslatable as exc:
        raise ValueError(f"cannot translate {pattern!r}: {exc}") from exc
    return f"(?i:{body})" if tree.state.flags & re.I else f"(?:{body})"


def build(patterns: Iterable[str]) -> Callable[[str], bool] | None:
    """A function telling whether an ASCII text may hold a match of any of ``patterns`` (False:
    none matches); None without RE2 or when a pattern cannot be translated."""
    try:
        import re2
    except ImportError:
        return None
    try:
        combined = "(?s)" + "|".join(translate(p) for p in patterns)
        options = re2.Options()
        # RE2's default budget: the DFA of finding texts stays ~0.1 MB; text of every kind
        # (a log) grows it to ~2.5 MB, then RE2 starts it anew (slower, never wrong)
        options.max_mem = 8 << 20
        # a long line of many "curl"/"sshpass" words outgrows the DFA's budget: RE2 then runs
        # its NFA (the same answer) and would log that to file descriptor 2, under the TUI
        options.log_errors = False
        rx = re2.compile(combined, options)
    except Exception as exc:  # the patterns still run, only slower
        log.warning("secret prefilter not built (%s): every text runs every pattern", exc)
        return None
    search = rx.search

    def may_hold(text: str) -> bool:
        return search(text) is not None

    return may_hold
