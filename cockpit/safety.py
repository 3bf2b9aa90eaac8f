"""What may be sent to a cluster, and what must never be shown or written.

Validators: every value the cockpit puts into a Slurm command line or a file read
(job ids, node, partition and user names, job names, paths) is checked here against
Slurm's syntax first, so a crafted string (``;touch /tmp/x``, ``$(...)``, backticks,
newlines, a leading ``-`` that would become an option) is refused with a clear message
before anything is sent. Transports then quote each argument (``shlex.join`` over SSH,
no shell locally); validation is the first of the two fences.

:func:`redact` replaces credentials (Huawei Cloud AK/SK, AWS key ids, bearer and
SDK-HMAC signatures, ``password=``/``token=`` values, URL passwords, private keys) by
``<redacted>`` in text the cockpit writes (bundles, reports, logs).
"""

from __future__ import annotations

import re

from cockpit.errors import UserError


class UnsafeValue(UserError, ValueError):
    """A value refused before it reached a command or a path (one line for the CLI).

    A ``ValueError`` too, so callers written against the old validators keep working.
    """


# Anchored with \Z (``$`` also matches before a trailing newline). Job ids the cockpit sends: 123, array task 123_4, het component 123+1 (no ranges).
JOB_ID_RE = re.compile(r"^\d{1,10}(?:_\d{1,10})?(?:\+\d{1,4})?\Z", re.ASCII)
# NodeName: letters, digits and . _ - (hostnames and Slurm's NodeName= values).
NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
# PartitionName: Slurm accepts the same character set; a leading '-' would be an option.
PARTITION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\Z")
# POSIX portable user names (useradd's default NAME_REGEX, plus upper case for AD sites).
USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\Z")

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check(rx: re.Pattern[str], value: object, what: str) -> str:
    # "4\n" passed the old ^...$ checks; without re.ASCII \d matched "４" and other digits.
    if not isinstance(value, str) or not rx.fullmatch(value):
        raise UnsafeValue(f"not a Slurm {what}: {value!r}")
    return value


def validate_job_id(job_id: str) -> str:
    """``job_id`` if it is a Slurm job id (``123``, ``123_4``, ``123+1``); else UnsafeValue."""
    return _check(JOB_ID_RE, job_id, "job id")


def validate_node_name(name: str) -> str:
    """``name`` if it is a plain node name (letters, digits, ``._-``, ≤128); else UnsafeValue."""
    return _check(NODE_RE, name, "node name")


def validate_partition(name: str) -> str:
    """``name`` if it is a partition name (letters, digits, ``._-``, no leading ``-``); else UnsafeValue."""
    return _check(PARTITION_RE, name, "partition name")


def validate_user(name: str) -> str:
    """``name`` if it is a user name (letters, digits, ``._-``, no leading ``-``); else UnsafeValue."""
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
    """An absolute path without NUL, CR or LF (read by byte range; never given to a shell); else UnsafeValue."""
    if not isinstance(path, str) or not path.startswith("/") or any(c in path for c in "\x00\n\r"):
        raise UnsafeValue(f"not an absolute path: {path!r}")
    return path


# --------------------------------------------------------------------------- redaction

REDACTED = "<redacted>"

# (pattern, replacement) applied in order; the same patterns serve str and bytes.
_SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
        "<redacted private key>",
    ),
    (r"(?i)(Authorization:\s*(?:Bearer|Basic|Token)\s+)\S+", r"\1" + REDACTED),
    # Huawei Cloud APIG signature header: Access=AK, ..., Signature=hex
    (r"(?i)((?:Access|Signature)=)[^\s,]+", r"\1" + REDACTED),
    (r"(?i)((?:X-Auth-Token|X-Security-Token):\s*)\S+", r"\1" + REDACTED),
    (
        r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+(@)",
        r"\1" + REDACTED + r"\2",
    ),  # user:password@host
    (r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", REDACTED),  # AWS-style access key ids
    # Huawei Cloud AK: 20 upper-case letters and digits (both present)
    (
        r"(?<![A-Za-z0-9])(?=[A-Z0-9]{0,19}[0-9])(?=[A-Z0-9]{0,19}[A-Z])[A-Z0-9]{20}(?![A-Za-z0-9])",
        REDACTED,
    ),
    # Huawei Cloud SK: 40 mixed-case characters (git SHAs are lower-case hex and stay)
    (
        r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        REDACTED,
    ),
)
_STR_RULES = [(re.compile(p, re.S), r) for p, r in _SECRET_PATTERNS]
_BYTES_RULES = [(re.compile(p.encode(), re.S), r.encode()) for p, r in _SECRET_PATTERNS]

# key=value / key: value. One token then a check of its last words ("db_password",
# "HUAWEICLOUD_SDK_SK"; not "task"): a single regex with the keywords went quadratic on
# a 10 MB line of "a_a_a_...".
_KV = r"""(?<![A-Za-z0-9_-])([A-Za-z0-9_-]{1,64}["']?\s*[:=]\s*["']?)([^\s"',;&]+)"""
_KV_STR = re.compile(_KV)
_KV_BYTES = re.compile(_KV.encode())
_SECRET_WORDS = {
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "sk",
    "ak",
    "apikey",
    "accesskey",
    "secretkey",
}
_SECRET_PAIRS = {
    "api_key",
    "access_key",
    "secret_key",
    "security_token",
    "auth_token",
    "private_key",
}


def _secret_key(key: str) -> bool:
    parts = re.split(r"[_-]", key.lower().rstrip("\"' \t:="))
    return parts[-1] in _SECRET_WORDS or "_".join(parts[-2:]) in _SECRET_PAIRS


def redact(text: str) -> str:
    """``text`` with credentials replaced by ``<redacted>`` (see module doc for what counts)."""
    text = _KV_STR.sub(lambda m: m[1] + REDACTED if _secret_key(m[1]) else m[0], text)
    for rx, repl in _STR_RULES:
        text = rx.sub(repl, text)
    return text


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` over raw bytes (log files in any encoding keep their other bytes)."""
    data = _KV_BYTES.sub(
        lambda m: (
            m[1] + REDACTED.encode() if _secret_key(m[1].decode("ascii", "replace")) else m[0]
        ),
        data,
    )
    for rx, repl in _BYTES_RULES:
        data = rx.sub(repl, data)
    return data


def redact_secrets(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """``text`` with each known secret value (e.g. the configured SK) replaced; empty values ignored."""
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(s, REDACTED)
    return text
