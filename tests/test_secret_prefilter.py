"""The one-pass prefilter in front of redaction never lets a secret through (#33).

A text it calls clean skips the ~28 secret patterns; that is only right if no pattern would
have matched it. Checked on every secret form the redaction tests know, on lines an operator
needs, and on generated ASCII text built from the patterns' own pieces (keys, quotes, prefixes,
runs of letters and digits), where near misses are dense.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit import safety
from cockpit.secret_prefilter import build, translate
from tests import test_redaction_forms, test_redaction_misses
from tests.hostile import test_secrets

PATTERNS = [safety._SECRET_KEY_HINT, *(p for p, _ in safety._SECRET_PATTERNS)]
MAY_HOLD = build(PATTERNS)


def _slow(text: str) -> str:
    """Redaction as written: the secret keys' values, then every pattern in turn."""
    out = safety._redact_kv(text, safety._KV_STR, safety._VALUE_STR, safety.REDACTED, str)
    for rx, repl in safety._STR_RULES:
        out = rx.sub(repl, out)
    return out


def _matched_by_a_pattern(text: str) -> bool:
    return _slow(text) != text


def _known_lines() -> list[str]:
    lines = [c[0] for c in test_redaction_forms.CASES]
    lines += [c[0] for c in test_redaction_misses.CASES]
    lines += list(test_secrets.SECRET_LINES) + list(test_secrets.KEEP)
    return [x for x in lines if isinstance(x, str)]


def test_it_is_built_for_every_pattern_of_today():
    # a pattern it cannot translate turns it off for all (every text then runs every pattern):
    # a new pattern must keep it on
    assert MAY_HOLD is not None
    for p in PATTERNS:
        assert translate(p)


@pytest.mark.parametrize("line", _known_lines())
def test_a_known_secret_line_is_never_called_clean(line):
    for text in {line, line.encode("ascii", "replace").decode("ascii")}:
        if _matched_by_a_pattern(text):
            assert MAY_HOLD(text), text


@pytest.mark.parametrize("space", list(" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"))
def test_every_kind_of_space_python_knows_is_a_space_to_it(space):
    # re's \s is str.isspace(): vertical tab and the ASCII separators too, which RE2's is not
    for line in _known_lines():
        text = line.replace(" ", space)
        if _matched_by_a_pattern(text):
            assert MAY_HOLD(text), text


@pytest.mark.parametrize("line", _known_lines())
def test_redaction_with_the_prefilter_is_the_same_as_every_pattern_run(line):
    assert safety.redact(line) == _slow(line)


@pytest.mark.parametrize(
    "key",
    sorted({*safety._SECRET_WORDS, *safety._SECRET_ENDINGS, *safety._SECRET_PAIRS})
    + ["PGPASSWORD", "MYSQL_PWD", "HUAWEICLOUD_SDK_SK", "db-pass", "X_AUTH_TOKEN"],
)
@pytest.mark.parametrize("sep", ["=", ": ", '"="', " \x0b= ", "\t:"])
def test_every_secret_key_is_seen_by_it(key, sep):
    for k in (key, key.upper(), key.title()):
        text = f"run {k}{sep}v4lue-123 now"
        assert MAY_HOLD(text), text
        assert safety.redact(text) == _slow(text)


PIECES = [
    "Authorization",
    "authorization",
    "Bearer",
    "bearer",
    "Basic",
    "OBS",
    "Credential=",
    "password",
    "PASSWD",
    "pwd",
    "secret",
    "token",
    "pg",
    "_",
    "-",
    "--",
    "-p",
    " -p",
    "=",
    ":",
    " : ",
    '"',
    "'",
    " ",
    "\t",
    "\n",
    "\x0b",
    "\x1c",
    "mysql",
    "mysqldump",
    "docker",
    "login",
    "name",
    "value",
    "sshpass",
    "curl",
    "-u",
    "--user",
    "ghp_",
    "github_pat_",
    "glpat-",
    "hf_",
    "sk-",
    "sk-proj-",
    "npm_",
    "AIza",
    "xoxb-",
    "xapp-1-",
    "Signature=",
    "Access=",
    "X-Auth-Token",
    "?key=",
    "&sig=",
    "hooks.slack.com/services/",
    "open.feishu.cn/open-apis/bot/v2/hook/",
    "discord.com/api/webhooks/123/",
    "https://",
    "u:",
    "@",
    ":8080/",
    "AKIA",
    "ASIA",
    "LTAI",
    "eyJ",
    ".",
    "/",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "A" * 16,
    "Ab1" * 7,
    "x9" * 20,
    "ABCDEFGHIJ0123456789",
    "aB3" * 14,
    "0123456789",
    "abcdefghij",
    "é",
    "K",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=12).map("".join))
def test_a_text_called_clean_matches_no_pattern(text):
    if text.isascii() and not MAY_HOLD(text):
        assert not _matched_by_a_pattern(text), text


def test_ordinary_finding_text_is_called_clean_and_a_secret_is_not():
    assert not MAY_HOLD("starved: 512 CPUs pending 119h while 995 later jobs started")
    assert MAY_HOLD("curl -H 'Authorization: Bearer abcdefgh12345678' https://api")
    assert safety.redact("db password='a b c' id AKIAABCDEFGHIJKLMNOP") == (
        "db password='<redacted>' id <redacted>"
    )
