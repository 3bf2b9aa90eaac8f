"""The floor under any Textual Slurm TUI: the least a Python + Textual app can do to show the
queue. It runs squeue once (the cockpit's argv), shows its first screenful in one ``Static`` and
idles. Run it with ``run_peer.sh`` like a peer; its first rows and peak RSS are what the
interpreter, Textual and one squeue cost before any parsing, diagnosis or store.
"""

from __future__ import annotations

import subprocess

from textual.app import App, ComposeResult
from textual.widgets import Static

ARGV = [
    "squeue",
    "--noheader",
    "--states=all",
    "-o",
    "%i%P%j%u%T%r%C%D%N%m%l%M%V%S%e%Z%a%q%E%Q%k%o%b",
]


class Floor(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("", id="rows")

    def on_mount(self) -> None:
        self.run_worker(self._queue, thread=True)

    def _queue(self) -> None:
        out = subprocess.run(ARGV, capture_output=True, text=True, check=False).stdout
        lines = out.splitlines()
        self.call_from_thread(self.query_one("#rows", Static).update, "\n".join(lines[:45]))


if __name__ == "__main__":
    Floor().run()
