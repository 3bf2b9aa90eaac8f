"""The language the cockpit speaks: English (the msgids themselves) or Chinese.

One process speaks one language, chosen once at start (:func:`choose`): ``--lang`` wins, then
``[ui] lang`` in the config, then the environment the way gettext reads it (``LANGUAGE``,
``LC_ALL``, ``LC_MESSAGES``, ``LANG``: the first one set decides); English otherwise.

The catalogue is loaded by :func:`set_language` (the only I/O here); :func:`gettext` and
:func:`ngettext` are then pure lookups over it, so the diagnosis engine may call them and
stay pure. Strings defined at import time (key bindings, column labels, help rows) are only
marked with :func:`N_` and translated where they are drawn, so a language chosen after the
import still applies.

Catalogues: one per area of the sources (``AREAS``), ``cockpit/locale/zh_CN/LC_MESSAGES/AREA.po``
(committed, edited by people) and its compiled ``AREA.mo`` (built by ``scripts/i18n.sh`` with
Babel and shipped as package data; ``tests/test_i18n.py`` fails when one is older than its
``.po``). Areas let the engine's texts and the screens' be translated side by side; at run time
they are one catalogue (each falls back to the next).
"""

from __future__ import annotations

import gettext as _gettext
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

# the catalogue files, one per area of the sources (scripts/i18n.sh says which files are whose)
AREAS = ("cockpit", "engine", "tui")
LOCALE_DIR = Path(__file__).parent / "locale"
LANGUAGES = ("en", "zh")
# the catalogue folder of each language other than English
_CATALOGUE = {"zh": "zh_CN"}
_ENV_ORDER = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_active: _gettext.NullTranslations = _gettext.NullTranslations()
_lang = "en"


def normalize(value: str | None) -> str | None:
    """``zh``, ``zh_CN.UTF-8``, ``zh-Hans``… -> ``"zh"``; ``en…``, ``C``, ``POSIX`` -> ``"en"``;
    anything else (a language the cockpit does not speak, or nothing) -> None."""
    v = (value or "").strip().split(".")[0].split("@")[0].replace("-", "_").lower()
    if not v:
        return None
    if v in ("c", "posix") or v == "en" or v.startswith("en_"):
        return "en"
    if v == "zh" or v.startswith("zh_"):
        return "zh"
    return None


def from_environment(environ: Mapping[str, str] | None = None) -> str | None:
    """The language the environment asks for, as gettext reads it (the first of ``LANGUAGE``,
    ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set; ``LANGUAGE`` is a ``:`` list, its first
    language the cockpit speaks wins). None: the environment names none we speak."""
    env = os.environ if environ is None else environ
    for var in _ENV_ORDER:
        value = env.get(var, "")
        if not value:
            continue
        for part in value.split(":") if var == "LANGUAGE" else (value,):
            lang = normalize(part)
            if lang is not None:
                return lang
        if var != "LANGUAGE":
            return None  # the locale is set and is not one we speak: English, not LANGUAGE
    return None


def choose(
    cli: str | None = None, config: str | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """``--lang`` > ``[ui] lang`` > the environment > English."""
    for asked in (cli, config):
        lang = normalize(asked)
        if lang is not None:
            return lang
    return from_environment(environ) or "en"


def load(lang: str) -> _gettext.NullTranslations:
    """The catalogue of ``lang`` read from the package (English: none, the msgids are it)."""
    folder = _CATALOGUE.get(lang)
    if folder is None:
        return _gettext.NullTranslations()
    merged: _gettext.NullTranslations | None = None
    for area in AREAS:
        with open(LOCALE_DIR / folder / "LC_MESSAGES" / f"{area}.mo", "rb") as fh:
            part = _gettext.GNUTranslations(fh)
        if merged is None:
            merged = part
        else:
            merged.add_fallback(part)
    assert merged is not None
    return merged


def set_language(lang: str) -> None:
    """Speak ``lang`` (``"en"`` or ``"zh"``) from now on, in this process."""
    global _active, _lang
    lang = normalize(lang) or "en"
    _active, _lang = load(lang), lang


def language() -> str:
    return _lang


def gettext(message: str) -> str:
    """``message`` in the current language (itself when it has no translation)."""
    return _active.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of ``singular``/``plural`` for ``n`` in the current language."""
    return _active.ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks ``message`` for the catalogue without translating it: it is translated where it
    is drawn (module-level constants, which exist before a language is chosen)."""
    return message


_ = gettext


_WORD = re.compile(r"[A-Za-z]{2,}")
_FIELD = re.compile(r"\{[^{}]*\}")


@lru_cache(maxsize=1)
def catalogue_words() -> frozenset[str]:
    """Every English word (lower case, two letters or more) of the catalogues' messages,
    outside their ``{fields}``: the prose the cockpit writes, as opposed to the facts it
    quotes (a program's name, a node, a number), which stay the same in every language."""
    words: set[str] = set()
    for folder in _CATALOGUE.values():
        for area in AREAS:
            try:
                with open(LOCALE_DIR / folder / "LC_MESSAGES" / f"{area}.mo", "rb") as fh:
                    msgids = _gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]
            except OSError:  # a catalogue not installed: its words count as facts, keys stay
                continue  # stable within this install
            for msgid in msgids:
                text = msgid[0] if isinstance(msgid, tuple) else msgid
                words.update(w.lower() for w in _WORD.findall(_FIELD.sub(" ", text)))
    return frozenset(words)
