"""Babel extraction for the failure catalogue's JSON: its human texts become messages of the
engine's catalogue (``scripts/i18n.sh engine``, mapped in ``babel.cfg``).

The producers' own words (templates, regexes, titles that are code names) stay as printed; what
the cockpit says about them does not: each template's ``remedy``, ``meaning`` and ``cause``.
Each distinct text is one message, at the line of the file where it first appears.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

# the fields of a template that are the cockpit's prose, not the producer's
HUMAN_FIELDS = ("remedy", "meaning", "cause")


def human_texts(data: dict) -> list[str]:
    """Every distinct human text of one catalogue file, in file order."""
    out: dict[str, None] = {}
    for t in data.get("templates", []):
        for field in HUMAN_FIELDS:
            text = t.get(field)
            if isinstance(text, str) and text.strip():
                out.setdefault(text)
    return list(out)


def extract_catalogue(
    fileobj: IO[bytes], keywords, comment_tags, options
) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """Babel's extraction method: (line, function name, message, comments) per text."""
    raw = fileobj.read().decode("utf-8")
    lines = raw.splitlines()
    for text in human_texts(json.loads(raw)):
        needle = json.dumps(text, ensure_ascii=False)
        line = next((i + 1 for i, ln in enumerate(lines) if needle in ln), 0)
        yield line, None, text, []
