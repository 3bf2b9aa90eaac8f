"""What cockpit.driver relies on inside Textual's private modules.

``cockpit.driver.CockpitDriver`` replaces Textual's input loop and reads private names
(``textual._xterm_parser.XTermParser`` and its ``_timeout_time`` deadline, ``textual._time``,
``textual._parser.ParseError``, ``LinuxDriver.run_input_thread``/``exit_event``). Textual is
pinned to the range tested (pyproject); when an upgrade changes any of this, these tests fail
naming the driver instead of the cockpit quietly eating a core or dropping a lone ESC.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

DRIVER = "cockpit.driver.CockpitDriver"


def _need(cond: bool, what: str) -> None:
    if not cond:
        pytest.fail(
            f"Textual changed what {DRIVER} relies on: {what}. Re-read Textual's "
            "linux_driver.run_input_thread and adapt cockpit/driver.py, or pin textual lower."
        )


def test_the_private_modules_the_driver_imports_still_exist():
    for mod, name in [
        ("textual._xterm_parser", "XTermParser"),
        ("textual._time", "get_time"),
        ("textual._parser", "ParseError"),
        ("textual.drivers.linux_driver", "LinuxDriver"),
    ]:
        try:
            found = hasattr(importlib.import_module(mod), name)
        except ImportError:
            found = False
        _need(found, f"{mod}.{name} is gone")


def test_the_xterm_parser_keeps_an_escape_deadline_and_a_tick():
    from textual._xterm_parser import XTermParser

    parser = XTermParser(False)
    _need(hasattr(parser, "_timeout_time"), "XTermParser has no _timeout_time (the ESC deadline)")
    _need(parser._timeout_time is None, "an idle XTermParser has a pending deadline")
    _need(callable(getattr(parser, "tick", None)), "XTermParser.tick() is gone")
    list(parser.feed("\x1b"))  # a lone ESC: the parser now waits for the rest of a sequence
    _need(
        isinstance(parser._timeout_time, float),
        "a lone ESC no longer sets XTermParser._timeout_time",
    )


def test_linux_driver_still_has_the_input_loop_the_driver_replaces():
    from textual.drivers.linux_driver import LinuxDriver

    _need(
        callable(getattr(LinuxDriver, "run_input_thread", None)),
        "LinuxDriver.run_input_thread is gone",
    )
    source = inspect.getsource(LinuxDriver.run_input_thread)
    for name in ("exit_event", "XTermParser", "process_message", "tick"):
        _need(name in source, f"LinuxDriver.run_input_thread no longer uses {name}")
    _need(
        "exit_event" in inspect.getsource(LinuxDriver.disable_input),
        "LinuxDriver.disable_input no longer stops the input thread through exit_event",
    )
