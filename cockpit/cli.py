"""Entry point ``cockpit``: the TUI by default, subcommands for scripts and tickets.

Each subcommand lives in ``cockpit/commands/<name>.py`` exposing
``register(subparsers) -> None`` (adds its parser, sets ``func``) and a
``run(args) -> int``. User errors raise :class:`cockpit.errors.UserError` and become
one clear line on stderr with exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from cockpit import i18n
from cockpit.errors import EXIT_NO_SOURCE, EXIT_USAGE, NoSourceAnswered, UserError
from cockpit.i18n import LANGUAGES, N_, _

COMMANDS = (
    "snapshot",
    "check_config",
    "diagnose",
    "collect",
    "incidents",
    "scan_log",
    "alerts",
    "watch",
    "web",
)


def add_common(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    """Options every command accepts, before or after the subcommand.

    On subcommand parsers the defaults are SUPPRESS: otherwise argparse would overwrite a
    ``cockpit --config F snapshot`` value with the subparser's default and silently ignore F.
    """
    d = (lambda v: v) if top else (lambda v: argparse.SUPPRESS)
    p.add_argument(
        "--config",
        metavar="FILE",
        default=d(None),
        help=_("config file (default: XDG config dir cockpit/config.toml)"),
    )
    p.add_argument(
        "--demo", action="store_true", default=d(False), help=_("use the built-in simulated site")
    )
    p.add_argument(
        "--demo-seed",
        type=int,
        default=d(7),
        metavar="N",
        help=_("seed of the demo site (default 7)"),
    )
    p.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=d(None),
        help=_("language: en or zh (default: [ui] lang in the config, else LANG/LC_ALL...)"),
    )


def _tui_only(argv: list[str]) -> bool:
    """True when ``argv`` has only the top-level options (the TUI): no subcommand, no help.

    Anything else (a positional, ``-h``, ``--``, an abbreviated option whose value we
    cannot tell apart) gets the full parser, which is always right; this only spares the
    TUI's start-up the import of every command module (~10 ms before the first frame).
    """
    takes_value = {"--config", "--demo-seed", "--record", "--replay", "--lang"}
    skip = False
    for tok in argv:
        if skip:
            skip = False
        elif tok in takes_value:
            skip = True
        elif (
            not tok.startswith("-")
            or tok in ("-", "--", "-h")
            or (len(tok) >= 3 and "--help".startswith(tok))
        ):
            return False  # argparse takes --he/--hel for --help: those need the full parser too
    return True


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``cockpit`` parser; given the ``argv`` it will parse and that is the TUI's
    (see :func:`_tui_only`), the subcommands are left out."""
    # argparse's own words ("usage:", "options", "the following arguments are required")
    # through the same catalogue: it looks its module-level _ up at each call
    argparse._ = i18n.gettext  # type: ignore[attr-defined]
    argparse.ngettext = i18n.ngettext  # type: ignore[attr-defined]
    parser = argparse.ArgumentParser(
        prog="cockpit",
        description=_(
            "Terminal cockpit for Slurm and ModelArts on-call: why is this job stuck or dead?"
        ),
        epilog=_(EXIT_STATUS),
    )
    add_common(parser, top=True)
    parser.add_argument(
        "--no-bell", action="store_true", help=_("do not ring the bell on new critical incidents")
    )
    parser.add_argument(
        "--record",
        metavar="DIR",
        help=_(
            "keep every Slurm command's output and log read, and every ModelArts API answer, "
            "in DIR (compressed, redacted)"
        ),
    )
    parser.add_argument(
        "--replay",
        metavar="DIR",
        help=_("play a --record DIR back through the same pipeline; ] [ step a poll, } { ten"),
    )
    parser.add_argument(
        "--readonly",
        action="store_true",
        help=_("no actions (drain, cancel, stop...) whatever the config's allow_actions say"),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if argv is not None and _tui_only(argv):
        return parser
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"cockpit.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"cockpit.commands.{name}":
                continue  # command not built yet
            raise
        mod.register(sub)
    _plain_descriptions(sub)
    return parser


EXIT_STATUS = N_(
    "exit status: 0 fine; 1 something to act on (a critical finding or open incident, an "
    "alert, a source that could not be read); 2 a usage or configuration error; 3 no source "
    "answered; 141 the reader of the output left"
)
# argparse's messages, marked here so the catalogue has them (argparse translates them itself)
_ARGPARSE = (
    N_("usage: "),
    N_("options"),
    N_("positional arguments"),
    N_("show this help message and exit"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("expected one argument"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("invalid %(type)s value: %(value)r"),
    N_("argument %(argument_name)s: %(message)s"),
)


def _plain_descriptions(sub: argparse._SubParsersAction) -> None:
    """Each command's ``--help`` opens with a sentence a person reads: the docstrings'
    reStructuredText quoting (````cockpit x````) dropped, and a command without a description
    gets its one-line help."""
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, p in sub.choices.items():
        if p.epilog is None:
            p.epilog = _(EXIT_STATUS)
        if i18n.language() != "en" and helps.get(name):
            p.description = helps[name]  # the docstring is English; the help line is translated
        elif p.description:
            p.description = p.description.replace("``", "")
        elif helps.get(name):
            p.description = helps[name][:1].upper() + helps[name][1:] + "."


def choose_language(argv: list[str], environ: dict[str, str] | None = None) -> str:
    """``--lang`` on the command line, else ``[ui] lang`` in the config (``--config`` or the
    default file), else the environment's: read before the parser exists, so ``--help``
    speaks it. A config that does not load is the command's to report, not this peek's."""
    opts = _option_values(argv, ("--lang", "--config"))
    return i18n.choose(opts.get("--lang"), _config_lang(opts.get("--config")), environ)


def _option_values(argv: list[str], names: tuple[str, ...]) -> dict[str, str]:
    """The last value of each option in ``names`` (``--x V`` or ``--x=V``), before ``--``."""
    out: dict[str, str] = {}
    for i, tok in enumerate(argv):
        if tok == "--":
            break
        name, eq, value = tok.partition("=")
        if name in names:
            if eq:
                out[name] = value
            elif i + 1 < len(argv):
                out[name] = argv[i + 1]
    return out


def _config_lang(path: str | None) -> str | None:
    import tomllib
    from pathlib import Path

    from cockpit.config import default_config_path

    try:
        with open(Path(path).expanduser() if path else default_config_path(), "rb") as fh:
            ui = tomllib.load(fh).get("ui")
    except (OSError, ValueError, RecursionError):
        return None
    lang = ui.get("lang") if isinstance(ui, dict) else None
    return lang if isinstance(lang, str) else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from cockpit import gcpolicy

    gcpolicy.limit_heap_arenas()  # before any thread allocates
    from cockpit.safety import install_log_redaction

    install_log_redaction()  # log records quote job output, which may hold credentials
    i18n.set_language(choose_language(argv))  # before the parser: its --help is translated
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            from cockpit.commands.tui import require_terminal
            from cockpit.commands.tui import run as run_tui

            require_terminal()
            return run_tui(args)
        return int(args.func(args) or 0)
    except NoSourceAnswered as exc:
        print(f"cockpit: {exc}", file=sys.stderr)
        return EXIT_NO_SOURCE
    except UserError as exc:
        print(f"cockpit: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `cockpit incidents --json | head`: the reader left; no traceback, and none again when
        # Python flushes stdout at exit (point it at /dev/null)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
