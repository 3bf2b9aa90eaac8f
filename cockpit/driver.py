"""A Textual ``LinuxDriver`` whose input thread sleeps until there is input.

Textual's stock input thread polls ``select(0.1)`` forever: ten wake-ups a second
with no key pressed, a large share of an idle cockpit's CPU. The timeout
only serves two things, each replaced here by something that wakes the thread
only when needed:

* noticing ``exit_event`` (set by ``disable_input`` on quit and on suspend, SIGTSTP): its
  ``set()`` here also writes a byte to a self-pipe the thread selects on;
* ``parser.tick()``, which delivers a lone ESC once the XTerm parser's escape
  delay has passed: the select timeout is the time left to that deadline, and
  ``None`` (sleep) when the parser waits for nothing.

Everything else (4 KiB reads, incremental UTF-8 decoding, feed/tick ->
``process_message``, the final flush) is as in the stock loop.

This relies on Textual's private modules: pyproject pins the Textual range tested, and
tests/test_textual_contract.py fails naming this driver when an upgrade changes them.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder

from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

# Stock behaviour (a tick every 0.1 s) for a parser without a visible deadline.
_FALLBACK_TICK_S = 0.1
_READ_BYTES = 4096


class _WakingEvent(threading.Event):
    """``exit_event`` whose ``set()`` also wakes the input thread's select.

    ``wake_fd`` is the pipe's write end while an input thread may be waiting on
    it, else ``None``; the lock keeps ``set()`` from writing to a descriptor that
    ``CockpitDriver.close`` has just closed (and the OS may have reused). Re-entrant:
    ``set()`` also runs in the SIGTSTP handler, which may interrupt its own thread
    while that holds the lock."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.RLock()
        self.wake_fd: int | None = None

    def set(self) -> None:
        super().set()  # first, so a thread that misses the byte still sees the flag
        with self.lock:
            if self.wake_fd is not None:
                try:
                    os.write(self.wake_fd, b"x")
                except BlockingIOError:  # pipe full: a wake-up is already pending
                    pass


class CockpitDriver(LinuxDriver):
    """``LinuxDriver`` whose input thread blocks until a key, a quit or an escape deadline."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.exit_event = _WakingEvent()
        self._wake_read_fd: int | None = None

    def _open_wake_pipe(self) -> int:
        """The self-pipe's read end, opened on first use (again after ``close`` on resume)."""
        event = self.exit_event
        with event.lock:
            if self._wake_read_fd is None:
                r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
                self._wake_read_fd, event.wake_fd = r, w
            return self._wake_read_fd

    def close(self) -> None:
        """Also close the self-pipe (called after ``disable_input`` joined the thread)."""
        super().close()
        event = self.exit_event
        with event.lock:
            fds = (self._wake_read_fd, event.wake_fd)
            self._wake_read_fd = event.wake_fd = None  # before closing: see _WakingEvent
            for fd in fds:
                if fd is not None:
                    os.close(fd)

    def run_input_thread(self) -> None:
        """Read the tty and post key/mouse events until ``exit_event`` is set."""
        tty, wake = self.fileno, self._open_wake_pipe()
        _drain(wake)  # a byte left by an earlier set() whose thread had already left
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        has_deadline = hasattr(parser, "_timeout_time")
        selector = selectors.SelectSelector()
        selector.register(tty, selectors.EVENT_READ)
        selector.register(wake, selectors.EVENT_READ)
        try:
            while not self.exit_event.is_set():
                if not has_deadline:
                    timeout: float | None = _FALLBACK_TICK_S
                elif parser._timeout_time is None:
                    timeout = None  # nothing half-parsed: sleep until input or quit
                else:
                    timeout = max(0.0, parser._timeout_time - get_time())
                for key, _mask in selector.select(timeout):
                    if key.fd == wake:
                        _drain(wake)
                        continue
                    data = os.read(tty, _READ_BYTES)
                    if not data:  # stdin at end of file (< /dev/null): it stays readable
                        selector.unregister(tty)  # forever; wait for quit alone, not at 100 % CPU
                        continue
                    text = decode(data)
                    if text:  # empty: half a UTF-8 character so far
                        for event in parser.feed(text):
                            self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
            # One last tick for an ESC whose delay ran out as we were told to stop.
            for event in parser.tick():
                self.process_message(event)
        finally:
            selector.close()
            try:  # end the parser; what it still held is dropped, as in the stock driver
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass


def _drain(fd: int) -> None:
    """Read the non-blocking pipe ``fd`` until it is empty."""
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass
