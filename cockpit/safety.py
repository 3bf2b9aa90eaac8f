"""What may be sent to a cluster, and what must never be shown or written.

Validators: every value the cockpit puts into a Slurm command line or a file read
(job ids, node, partition and user names, job names, paths) is checked here against
Slurm's syntax first, so a crafted string (``;touch /tmp/x``, ``$(...)``, backticks,
newlines, a leading ``-`` that would become an option) is refused with a clear message
before anything is sent. Transports then quote each argument (``shlex.join`` over SSH,
no shell locally); validation is the first of the two fences.

:func:`redact` replaces credentials (Huawei Cloud AK/SK, AWS key ids, bearer and
SDK-HMAC signatures, ``password=``/``passwd:``/``token=`` values and any ``*_SECRET_ACCESS_KEY``
or ``*_SDK_SK`` style variable, URL passwords, chat-robot webhook tokens, private keys) by
``<redacted>``. It is the one function every way out goes through: webhook bodies, notify
command stdin and environment, the alert history, JSON/Markdown reports, bundles, and the
cockpit's own log records (:func:`install_log_redaction`). It takes text, bytes, or JSON-like
values (dicts, lists) so a channel redacts what it sends, not a serialisation of it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, overload

from cockpit.errors import UserError
from cockpit.secret_prefilter import build as build_prefilter


class UnsafeValue(UserError, ValueError):
    """A value refused before it reached a command or a path (one line for the CLI).

    A ``ValueError`` too, so a caller that handles bad values as ``ValueError`` catches it.
    """


# Anchored with \Z (``$`` also matches before a trailing newline). Job ids the cockpit sends:
# 123, array task 123_4, het component 123+1 (no ranges).
# Slurm 26.05 also takes a SLUID wherever a job id goes: "s" and base32 letters and digits
# (s83SM8SACRPA00).
JOB_ID_RE = re.compile(r"^(?:\d{1,10}(?:_\d{1,10})?(?:\+\d{1,4})?|s[0-9A-Za-z]{10,20})\Z", re.ASCII)
# NodeName: letters, digits and . _ - (hostnames and Slurm's NodeName= values).
NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
# PartitionName: Slurm accepts the same character set; a leading '-' would be an option.
PARTITION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\Z")
# POSIX portable user names (useradd's default NAME_REGEX, plus upper case for AD sites).
USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\Z")

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check(rx: re.Pattern[str], value: object, what: str) -> str:
    # fullmatch and \Z because "4\n" passes ^...$; re.ASCII because \d also matches "４".
    if not isinstance(value, str) or not rx.fullmatch(value):
        raise UnsafeValue(f"not a Slurm {what}: {value!r}")
    return value


def validate_job_id(job_id: str) -> str:
    """``job_id`` if it is a Slurm job id (``123``, ``123_4``, ``123+1``, a 26.05 SLUID);
    else UnsafeValue."""
    return _check(JOB_ID_RE, job_id, "job id")


def validate_node_name(name: str) -> str:
    """``name`` if it is a plain node name (letters, digits, ``._-``, ≤128); else UnsafeValue."""
    return _check(NODE_RE, name, "node name")


def validate_partition(name: str) -> str:
    """``name`` if it is a partition name (letters, digits, ``._-``, no leading ``-``).

    Anything else raises UnsafeValue."""
    return _check(PARTITION_RE, name, "partition name")


def validate_user(name: str) -> str:
    """``name`` if it is a user name (letters, digits, ``._-``, no leading ``-``).

    Anything else raises UnsafeValue."""
    return _check(USER_RE, name, "user name")


def validate_job_name(name: str) -> str:
    """A job name passed as one argv element (``sacct --name``): non-empty, no control
    characters, no leading ``-``, at most 1024 characters; else UnsafeValue."""
    if (
        not isinstance(name, str)
        or not name
        or name.startswith("-")
        or len(name) > 1024
        or _CONTROL.search(name)
    ):
        raise UnsafeValue(f"not a job name that can be passed to sacct: {name!r}")
    return name


def validate_path(path: str) -> str:
    """An absolute path without NUL, CR or LF (read by byte range; never given to a shell).

    Anything else raises UnsafeValue."""
    if not isinstance(path, str) or not path.startswith("/") or any(c in path for c in "\x00\n\r"):
        raise UnsafeValue(f"not an absolute path: {path!r}")
    return path


# --------------------------------------------------------------------------- redaction

REDACTED = "<redacted>"

# (pattern, replacement) applied in order; the same patterns serve str and bytes.
_SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        # PEM keys, and PGP's armour ("PRIVATE KEY BLOCK")
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "<redacted private key>",
    ),
    # the header, also as a JSON or YAML key; OBS, OSS and AWS v2 carry "AK:signature"
    (
        r"(?i)(Authorization[\"']?\s*[:=]\s*[\"']?(?:Bearer|Basic|Token|Digest|OBS|OSS|AWS)\s+)"
        r"[^\s\"']+",
        r"\1" + REDACTED,
    ),
    # AWS SigV4 (headers and presigned URLs): the access key id before the scope
    (r"(Credential=)[^/\s,&\"']+", r"\1" + REDACTED),
    # a quoted value after a secret-named key keeps its quotes; spaces inside are the secret's
    (
        r"(?i)((?<![A-Za-z])(?:[A-Za-z0-9]*_)?(?:pg)?(?:pass(?:word|wd)?|pwd|secret|token)"
        r"[\"']?\s*[:=]\s*)([\"'])[^\"'\n]*\2",
        r"\1\2" + REDACTED + r"\2",
    ),
    # command-line forms: --password VALUE, --hf_token VALUE, --api-key VALUE, mysql -pVALUE
    (
        r"(?i)(--?(?:[a-z0-9]+[_-])*(?:password|passwd|token|secret|api[_-]?key"
        r"|access[_-]?key|secret[_-]?key)\s+)(?!-)[^\s\"']+",
        r"\1" + REDACTED,
    ),
    # the -p of mysql's own command, not of a command after it (mysql/8.0; srun -pgpu)
    # (its -p within 1 KiB of the word: the unbounded lazy run was rescanned to the end of
    # the line from every "mysql", quadratic: a 160 kB command of such words took 5 s)
    # (-p'quoted secret' too: a quote right after -p left the whole value in place)
    (
        r"(\bmysql(?:dump|admin)?\b[^\n;&|]{0,1024}?\s-p)(?=\S)"
        r"(?:'[^'\n]{0,512}'|\"[^\"\n]{0,512}\"|[^\s\"']+)",
        r"\1" + REDACTED,
    ),
    # docker/podman login -p VALUE (its short form of --password; -p elsewhere is a port)
    (
        r"(\b(?:docker|podman|nerdctl|buildah)\s+login\b[^\n;&|]{0,256}?\s-p(?:\s+|=)?)"
        r"(?=[^\s-])(?:([\"'])[^\"'\n]*\2|[^\s\"']+)",
        r"\1" + REDACTED,
    ),
    # Kubernetes env entries: "name: DB_PASSWORD" then "value: ..." (YAML or JSON)
    (
        r"(\bname[\"']?\s*:\s*[\"']?(?i:[A-Za-z0-9_.-]*(?:password|passwd|secret|token|api_?key"
        r"|access_?key|_sk))[\"']?\s*,?\s*\n?\s*[\"']?value[\"']?\s*:\s*[\"']?)[^\s\"',}]+",
        r"\1" + REDACTED,
    ),
    # sshpass -p 'a quoted secret' (spaces inside are the secret's)
    (r"(sshpass\b[^\n]{0,256}?\s-p\s*)([\"'])[^\"'\n]*\2", r"\1\2" + REDACTED + r"\2"),
    # sshpass -p VALUE (or -pVALUE); curl -u/--user USER:PASSWORD keeps the user
    (
        r"(sshpass\b[^\n]{0,256}?\s-p\s*|curl\b[^\n]{0,256}?\s(?:-u\s*|--user[=\s]\s*)"
        r"[\"']?[^\s:\"']+:)(?=[^\s\"'])[^\s\"']+",
        r"\1" + REDACTED,
    ),
    # tokens with a vendor prefix: GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Slack
    # (xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xapp-). These two start with a literal (no
    # \b) so the regex engine skips ahead to it: each costs a few percent of redact's time
    (
        r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|glpat-[A-Za-z0-9_-]{20,}"
        r"|hf_[A-Za-z0-9]{30,}"
        # OpenAI and Anthropic keys, npm tokens, Google API keys
        r"|sk-(?:(?:proj|svcacct|admin|ant-[a-z]+\d*)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,})"
        r"|npm_[A-Za-z0-9]{36}|AIza[0-9A-Za-z_-]{35}"
        r"|xox[abposr]-[A-Za-z0-9-]{8,}|xapp-[0-9]-[A-Za-z0-9-]{8,})",
        REDACTED,
    ),
    # Huawei Cloud APIG signature header: Access=AK, ..., Signature=hex
    (r"(?i)(Signature=)[^\s,]+", r"\1" + REDACTED),
    (r"(Access=)[A-Z0-9]{16,}\b", r"\1" + REDACTED),  # an AK, not Access=ReadWrite
    (r"(?i)((?:X-Auth-Token|X-Security-Token):\s*)\S+", r"\1" + REDACTED),
    # a bearer token quoted without its header (curl -H lines cut, SDK debug output)
    (r"\b([Bb]earer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1" + REDACTED),
    # chat robots: the token is the URL (WeCom ?key=, DingTalk ?access_token=, Slack, Feishu,
    # Discord paths); anyone holding it can post to the channel
    # (sig= is an Azure SAS signature)
    (r"(?i)([?&](?:key|access_token|token|sign|sig)=)[^\s&\"'#]+", r"\1" + REDACTED),
    (r"(?i)(hooks\.slack\.com/(?:services|workflows|triggers)/)[^\s\"'?#]+", r"\1" + REDACTED),
    (
        r"(?i)(open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/)[^\s\"'?#/]+",
        r"\1" + REDACTED,
    ),
    (r"(?i)(discord(?:app)?\.com/api/webhooks/\d+/)[^\s\"'?#/]+", r"\1" + REDACTED),
    # user:password@host; a password may hold "/" and "@" (unencoded, as people type it), so it
    # runs to the token's last "@"; host:8080/ is a port, not a password
    (
        r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']*:)(?!\d{1,5}(?:[/?#\s\"']|\Z))"
        r"(?:(?!://)[^\s\"']){1,512}(@)",
        r"\1" + REDACTED + r"\2",
    ),
    (r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", REDACTED),  # AWS-style access key ids
    (r"\bLTAI[A-Za-z0-9]{12,30}\b", REDACTED),  # Alibaba Cloud AccessKey ids
    # a JSON Web Token anywhere (SLURM_JWT=eyJ..., a bare token in a log): three base64url parts
    (r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", REDACTED),
    # Huawei Cloud AK: 20 upper-case letters and digits (both present)
    (
        r"(?<![A-Za-z0-9])(?=[A-Z0-9]{0,19}[0-9])(?=[A-Z0-9]{0,19}[A-Z])[A-Z0-9]{20}(?![A-Za-z0-9])",
        REDACTED,
    ),
    # Huawei Cloud SK: 40 mixed-case letters and digits (git SHAs are lower-case hex and stay;
    # a path of 40 such characters between slashes is a path: /shared/Projects/Alice/Vision)
    (
        r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9]{0,39}[A-Z])(?=[A-Za-z0-9]{0,39}[a-z])"
        r"(?=[A-Za-z0-9]{0,39}[0-9])[A-Za-z0-9]{40}(?![A-Za-z0-9/+=])",
        REDACTED,
    ),
)
_STR_RULES = [(re.compile(p, re.S), r) for p, r in _SECRET_PATTERNS]
_BYTES_RULES = [(re.compile(p.encode(), re.S), r.encode()) for p, r in _SECRET_PATTERNS]


def _expander(repl):
    """``repl`` as ``sub`` takes it at least cost: a template with group references
    (``\\1<redacted>``) as a function expanding it, which runs only on a match (``sub`` given
    the template itself parses it in Python on every call, match or not: 7x the cost of a
    search that finds nothing, and most text has no secret); a plain one as it is."""
    if "\\" not in (repl if isinstance(repl, str) else repl.decode("latin-1")):
        return repl
    return lambda m: m.expand(repl)


_STR_SUBS = [(rx, _expander(r)) for rx, r in _STR_RULES]
_BYTES_SUBS = [(rx, _expander(r)) for rx, r in _BYTES_RULES]

# key=value / key: value. One token then a check of its last words ("db_password",
# "HUAWEICLOUD_SDK_SK"; not "task"): a single regex with the keywords went quadratic on
# a 10 MB line of "a_a_a_...". The value is matched only after a secret key; after any other
# key the scan goes on inside its value (``https://host/?access_token=...``), which keeps a
# line of ``key=key=key=...`` linear. A word after a ``/`` is a file name, not a key
# (``/etc/passwd: No such file``).
_KEY = r"""(?<![A-Za-z0-9_/-])([A-Za-z0-9_-]{1,64}["']?\s*[:=]\s*["']?)"""
_VALUE = r"""[^\s"',;&]+"""
_KV_STR = re.compile(_KEY)
_KV_BYTES = re.compile(_KEY.encode())
_VALUE_STR = re.compile(_VALUE)
_VALUE_BYTES = re.compile(_VALUE.encode())
_SECRET_WORDS = {
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "sk",
    "ak",
    "apikey",
    "accesskey",
    "secretkey",
    "jwt",
    "accountkey",  # Azure storage connection strings
    "sharedaccesskey",  # Azure Service Bus / Event Hubs
}
_SECRET_PAIRS = {
    "api_key",
    "access_key",
    "secret_key",
    "security_token",
    "auth_token",
    "private_key",
}


_SECRET_ENDINGS = ("password", "passwd", "secret", "token")
# What every key _redact_kv replaces a value after has in the text: its last word (_secret_key:
# a secret word, a word ending in one, or a pair's second word) right before the quote, spaces
# and ':' or '=' that _KEY takes. A text without one has no value to replace.
_SECRET_KEY_HINT = (
    "(?i)(?:"
    + "|".join(
        sorted({*_SECRET_WORDS, *_SECRET_ENDINGS, *(p.split("_")[-1] for p in _SECRET_PAIRS)})
    )
    + r""")["']?\s*[:=]"""
)

# False: an ASCII text none of the patterns matches and holding no secret key before a ':' or
# '=' (see cockpit.secret_prefilter); built at the first redaction, not at import (~20 ms)
_MAY_HOLD: Callable[[str], bool] | None = None


def _may_hold_built() -> Callable[[str], bool]:
    global _MAY_HOLD
    patterns = [_SECRET_KEY_HINT, *(p for p, _ in _SECRET_PATTERNS)]
    _MAY_HOLD = build_prefilter(patterns) or (lambda _text: True)
    return _MAY_HOLD


@lru_cache(maxsize=4096)  # a JSON body's keys are the same few names in every finding
def _secret_key(key: str) -> bool:
    parts = re.split(r"[_-]", key.lower().rstrip("\"' \t:="))
    last = parts[-1]
    # PGPASSWORD, MYSQL_PWD, DB_PASS: the word may be glued to a prefix
    return (
        last in _SECRET_WORDS
        or last.endswith(_SECRET_ENDINGS)
        or "_".join(parts[-2:]) in _SECRET_PAIRS
    )


def _quoted_end(text, m) -> int | None:
    """Where the quoted value after key match ``m`` ends (its closing quote, on the same line);
    None when the value is not quoted."""
    q = m[1][-1:]
    if q not in ("'", '"', b"'", b'"'):
        return None
    end = text.find(q, m.end())
    nl = text.find("\n" if isinstance(text, str) else b"\n", m.end())
    if end < 0 or (0 <= nl < end):
        return None
    return end


def _redact_kv(text, rx, value_rx, mark, as_str):
    """Values of secret-named keys replaced by ``mark`` (a string, or a function of the value
    giving its replacement)."""
    out = []
    pos = 0
    match = value_rx.match
    known: dict = {}  # key -> secret? (a log repeats the same few keys)
    for m in rx.finditer(text):
        if m.start() < pos:
            continue  # inside a secret value already replaced
        key = m[1]
        secret = known.get(key)
        if secret is None:
            secret = _secret_key(as_str(key))
            if len(known) < 4096:
                known[key] = secret
        if not secret:
            continue  # the scan goes on inside its value
        end = _quoted_end(text, m)
        v = None if end is not None else match(text, m.end())
        if end is not None:  # KEY = 'a secret with spaces': all of it, up to the quote
            out.append(text[pos : m.end()])
            secret = text[m.end() : end]
            out.append(mark(secret) if callable(mark) else mark)
            pos = end
        elif v is not None:
            out.append(text[pos : m.end()])
            out.append(mark(v[0]) if callable(mark) else mark)
            pos = v.end()
    if not out:
        return text
    out.append(text[pos:])
    return text[:0].join(out)


def _redact_str(text: str) -> str:
    if text.isascii() and not (_MAY_HOLD or _may_hold_built())(text):
        return text  # no secret key, no pattern: one RE2 pass instead of ~29 ``re`` scans
    out = _redact_kv(text, _KV_STR, _VALUE_STR, REDACTED, str)
    for rx, repl in _STR_SUBS:
        out = rx.sub(repl, out)
    return out


# The store's incident bodies are redacted again whenever a finding is a new object (at a busy
# site a starved job's count of later jobs moves every poll: hundreds of findings a poll at 10k
# jobs, thousands at 100k), yet most of their strings (names, reasons, paths) are last poll's;
# redact_repeated() keeps each short string's answer. Two generations, so the memo holds the
# strings in use whatever their number (~14k a poll at 10k jobs, ~190k at 100k: a fixed cap
# thrashed there) and forgets the others: the generation turns after 4 lookups per entry kept,
# or when it holds twice as many strings as were found in it (a stream of strings that never
# come back); a hit in the last generation moves to the new one, the rest are dropped.
_MEMO: dict[str, str] = {}
_OLD: dict[str, str] = {}
_COUNTS = [0, 0]  # lookups, hits in this generation
_MEMO_LEN = 4096  # longer strings (logs, scripts) are scanned each time, not kept


def _kept_str(text: str) -> str:
    global _MEMO, _OLD
    if len(text) > _MEMO_LEN:
        return _redact_str(text)
    counts, n = _COUNTS, len(_MEMO)
    counts[0] += 1
    # asked every 1024 lookups (a busy site makes ~8k a poll): the bounds move by as much
    if not counts[0] & 1023 and (
        counts[0] > 4 * max(n, len(_OLD), 4096) or n > 2 * max(counts[1], 16384)
    ):
        _OLD, _MEMO, counts[:] = _MEMO, {}, [1, 0]
    memo = _MEMO
    got = memo.get(text)
    if got is None:
        got = _OLD.get(text)
        if got is None:
            got = memo[text] = _redact_str(text)
            return got
        memo[text] = got
    counts[1] += 1
    return got


def _ascii(b: bytes) -> str:
    return b.decode("ascii", "replace")


def _redact_raw(data: bytes) -> bytes:
    data = _redact_kv(data, _KV_BYTES, _VALUE_BYTES, REDACTED.encode(), _ascii)
    for rx, repl in _BYTES_SUBS:
        data = rx.sub(repl, data)
    return data


_TOKENS = (b"<redacted private key>", REDACTED.encode())


def _mask(n: int) -> bytes:
    """``n`` bytes saying redacted: ``<redacted>***`` when it fits, else ``***``."""
    token = REDACTED.encode()
    return token + b"*" * (n - len(token)) if n >= len(token) else b"*" * n


def _same_length(m: re.Match[bytes], repl: bytes) -> bytes:
    out = m.expand(repl)
    if len(out) == len(m[0]):
        return out
    for token in _TOKENS:
        i = out.find(token)
        if i >= 0:
            secret = len(m[0]) - (len(out) - len(token))
            return out[:i] + _mask(max(secret, 0)) + out[i + len(token) :]
    return out


def redact_in_place(data: bytes) -> bytes:
    """:func:`redact` over bytes keeping every byte at its offset: each secret becomes
    ``<redacted>`` padded with ``*`` to its own length (``***`` when shorter). For file ranges
    that are addressed by offset afterwards (a recording's log reads)."""
    data = _redact_kv(data, _KV_BYTES, _VALUE_BYTES, lambda v: _mask(len(v)), _ascii)
    for rx, repl in _BYTES_RULES:
        data = rx.sub(lambda m, r=repl: _same_length(m, r), data)
    return data


@overload
def redact(value: str) -> str: ...
@overload
def redact(value: bytes) -> bytes: ...
@overload
def redact(value: Any) -> Any: ...
def redact(value: Any) -> Any:
    """``value`` with credentials replaced by ``<redacted>`` (see the module doc for what
    counts). Text and bytes are scanned; in dicts, lists and tuples every string is, and the
    value of a secret-named key (``{"token": ...}``) is replaced whole. Other values pass."""
    return _redact(value, _redact_str)


def redact_repeated_str(text: str) -> str:
    """:func:`redact_repeated` of one string, without the walk's type checks (the store's
    finding bodies, built field by field); anything else as :func:`redact_repeated` has it."""
    return _kept_str(text) if type(text) is str else _redact(text, _kept_str)


def redact_repeated(value: Any) -> Any:
    """:func:`redact` for values whose strings come back again and again (the store's incident
    bodies, poll after poll): the same answer, each short string's kept (see ``_kept_str``)."""
    return _redact(value, _kept_str)


def _redact(value: Any, text: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, (bytes, bytearray)):
        return _redact_raw(bytes(value))
    if isinstance(value, Mapping):
        return {
            k: REDACTED
            if isinstance(k, str) and isinstance(v, str) and v and _secret_key(k)
            else _redact(v, text)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        if type(value) not in (list, tuple):
            return value
        return type(value)(_redact(v, text) for v in value)
    return value


def scrub(text: str, max_len: int = 4096, repeated: bool = False) -> str:
    """One line of job-controlled text on a way out (a report, an alert channel, a store
    column): credentials redacted, then terminal escapes, bidi and line breaks dropped and the
    length capped, then redacted again (a key the cap cut in half still looks like one).
    ``repeated``: the same text comes back poll after poll (see :func:`redact_repeated`)."""
    from cockpit.text import clean

    red = redact_repeated if repeated else redact
    return red(clean(red(text), max_len))


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` over raw bytes (log files in any encoding keep their other bytes)."""
    return redact(data)


_FORMATTER = logging.Formatter()  # formats a traceback once, to redact it


def install_log_redaction() -> None:
    """Make every log record the process creates carry a redacted message, traceback and stack.

    A record factory rather than a handler filter, so handlers added later (pytest's, a
    user's ``logging.conf``, Python's last-resort stderr handler) only ever see redacted
    text. Idempotent; the CLI entry point calls it before anything logs."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "cockpit_redacts", False):
        return

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            record.msg, record.args = redact(record.getMessage()), None
        except (TypeError, ValueError):  # a bad format string: logging reports it, not us
            pass
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            record.exc_text = redact(_FORMATTER.formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    make.cockpit_redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make)


def redact_secrets(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """``text`` with each known secret (e.g. the configured SK) replaced; empty values ignored."""
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(s, REDACTED)
    return text


# --------------------------------------------------------------------------- job-chosen paths

READ, SEARCH = 4, 1  # permission bits: read a file, pass through a directory


def job_path_parts(path: str) -> list[str]:
    """The components of a path a job chose (StdOut, StdErr, WorkDir): absolute, no ``..``
    segment (it would leave the tree the path names); else UnsafeValue."""
    validate_path(path)
    parts = [p for p in path.split("/") if p and p != "."]
    if ".." in parts:
        raise UnsafeValue(f"not read: {path} leaves its directory ('..')")
    return parts


def may_access(
    mode: int, owner_uid: int | None, owner_gid: int | None, uid: int, gid: int | None, want: int
) -> bool:
    """Whether user ``uid`` (primary group ``gid``) has the ``want`` bits (READ, SEARCH) on a
    file of ``mode`` owned by ``owner_uid``:``owner_gid``, as the kernel decides: the owner's
    bits for the owner, else the group's for the group, else the others'. Root may do anything;
    supplementary groups are not known to the cockpit and do not count."""
    if uid == 0:
        return True
    if owner_uid == uid:
        bits = mode >> 6
    elif gid is not None and owner_gid == gid:
        bits = mode >> 3
    else:
        bits = mode
    return bits & want == want
