"""printf message templates -> regexes over log lines (and back to example lines, for tests).

The producers' sources hold messages as C format strings (``"Unable to create %s: %m"``). A
template becomes a regex that finds the message inside any log line: each conversion turns
into what it prints, the literal text is matched as written. Leading and trailing conversions
are dropped (``"%s: %s: unable to ..."``: the function and plugin names a build may or may not
print), so the regex starts and ends on the message's own words.

Slurm's own conversions (``%pJ`` a job, ``%ps`` a step, ``%pA`` an address) and glibc's
``%m`` (strerror of errno) print free text.
"""

from __future__ import annotations

import re

# flags, width, precision, length, conversion; Slurm's %p<Upper/lower> extensions first
SPEC = re.compile(
    r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
    r"(?P<len>hh|h|ll|l|L|q|j|z|t)?(?P<conv>p[A-Za-z]|[diouxXeEfFgGaAcspm%])"
)

_TEXT = r"[^\n]*?"  # free text: lazy, never past the line
_CONV: dict[str, str] = {
    "d": r"-?\d+",
    "i": r"-?\d+",
    "u": r"\d+",
    "o": r"[0-7]+",
    "x": r"[0-9a-fA-F]+",
    "X": r"[0-9a-fA-F]+",
    "f": r"-?[0-9.]+(?:e[-+]?\d+)?|-?nan|-?inf",
    "e": r"-?[0-9.]+e[-+]?\d+",
    "g": r"-?[0-9.]+(?:e[-+]?\d+)?",
    "c": r".",
    "p": r"(?:0x[0-9a-fA-F]+|\(nil\))",
    "s": _TEXT,
    "m": _TEXT,
    "%": "%",
}
for _c in "EFGaA":
    _CONV[_c] = _CONV[_c.lower()] if _c.lower() in _CONV else r"[-+0-9.a-fA-Fpx]+"

_META = re.compile(r"([.^$*+?{}\[\]\\|()])")


def escape(text: str) -> str:
    """Literal text as a regex both Python's re and RE2 read alike (only metacharacters)."""
    return _META.sub(r"\\\1", text)


def parts(template: str) -> list[tuple[str, str]]:
    """(kind, text) pieces: ("lit", words) and ("conv", the conversion letter(s))."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in SPEC.finditer(template):
        if m.start() > pos:
            out.append(("lit", template[pos : m.start()]))
        conv = m.group("conv")
        if conv == "%":
            out.append(("lit", "%"))
        else:  # "#x" prints 0x...: the flag changes what the line holds
            out.append(("conv", "#" + conv if "#" in m.group("flags") else conv))
        pos = m.end()
    if pos < len(template):
        out.append(("lit", template[pos:]))
    return out


def core(template: str) -> list[tuple[str, str]]:
    """:func:`parts` without leading and trailing conversions and the separators that only
    glue them on (``"%s: "``, ``": %m"``, ``" (%d)"``)."""
    ps = parts(template)
    glue = re.compile(r"^[\s:;,.=()\[\]'\"-]*$")
    while ps and (ps[0][0] == "conv" or glue.match(ps[0][1])):
        ps.pop(0)
    while ps and (ps[-1][0] == "conv" or glue.match(ps[-1][1])):
        ps.pop()
    if ps:  # glue characters at the ends of the kept literal text: keep the words only
        k, t = ps[0]
        ps[0] = (k, re.sub(r"^[\s:;,=\[\]()\"'-]+", "", t))
        k, t = ps[-1]
        ps[-1] = (k, re.sub(r"[\s:;,=\[(\"'-]+$", "", t))
    return ps


def literal_chars(template: str) -> int:
    """How many characters of a template's core are its own words (how specific it is)."""
    return sum(len(t.strip()) for k, t in core(template) if k == "lit")


def to_regex(template: str) -> str:
    """The regex of a template's core (see :func:`core`); searched, not anchored."""
    out = []
    for kind, text in core(template):
        out.append(escape(text) if kind == "lit" else _conv_rx(text))
    return "".join(out)


def _conv_rx(conv: str) -> str:
    if conv.startswith("p") and len(conv) == 2:
        return _TEXT  # Slurm's %pJ / %ps / %pA...: a job, step or address in words
    if conv.startswith("#"):
        return r"0[xX][0-9a-fA-F]+" if conv[1:] in ("x", "X") else _CONV.get(conv[1:], _TEXT)
    rx = _CONV.get(conv, _TEXT)
    return rx if "|" not in rx else f"(?:{rx})"


# example values a realistic line carries, by conversion
_EXAMPLE: dict[str, str] = {
    "d": "-1",
    "i": "3",
    "u": "42",
    "o": "755",
    "x": "1f",
    "X": "1F",
    "f": "0.50",
    "e": "1.5e+03",
    "g": "2.5",
    "c": "x",
    "p": "0x7f3a2c001230",
    "s": "/var/spool/slurmd/job00042",
    "m": "No such file or directory",
    "pJ": "JobId=4242",
    "ps": "StepId=4242.0",
    "pS": "StepId=4242.0",
    "pA": "10.0.0.12:6818",
    "pD": "StepId=4242.0",
}


def instantiate(template: str, values: dict[str, str] | None = None) -> str:
    """The template printed with realistic values (``%u`` -> 42, ``%s`` -> a spool path)."""
    vals = {**_EXAMPLE, **(values or {})}

    def one(m: re.Match[str]) -> str:
        conv = m.group("conv")
        if conv == "%":
            return "%"
        if "#" in m.group("flags") and conv in ("x", "X"):
            return "0x1f"
        return vals.get(conv, vals.get(conv[:1], "x"))

    return SPEC.sub(one, template)
