"""The one-pass prefilter in front of redaction never lets a secret through (#33).

A text it calls clean skips the ~28 secret patterns; that is only right if no pattern would
have matched it. Checked on every secret form the redaction tests know, on lines an operator
needs, and on generated ASCII text built from the patterns' own pieces (keys, quotes, prefixes,
runs of letters and digits), where near misses are dense.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit import safety
from cockpit.secret_prefilter import build, translate
from tests import test_redaction_forms, test_redaction_misses
from tests.hostile import test_secrets

PATTERNS = [p for p, _ in safety._SECRET_PATTERNS]
RULES = [re.compile(p, re.S) for p in PATTERNS]
MAY_HOLD = build(PATTERNS)


def _matched_by_a_pattern(text: str) -> bool:
    return any(rx.search(text) for rx in RULES)


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
    slow = safety._redact_kv(line, safety._KV_STR, safety._VALUE_STR, safety.REDACTED, str)
    for rx, repl in safety._STR_RULES:  # the rules as written, each in turn
        slow = rx.sub(repl, slow)
    assert safety.redact(line) == slow


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
