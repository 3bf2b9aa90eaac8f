"""A Slurm command that ran and failed, and how a failure reads in a Snapshot or evidence."""

from __future__ import annotations

from cockpit.model import SourceError


def command_label(argv: tuple[str, ...] | list[str]) -> str:
    """Counter key: ``squeue``, ``squeue --only-job-state``, ``squeue -O``, ``sacct``,
    ``scontrol show node``..."""
    if argv and argv[0] == "squeue" and "--only-job-state" in argv:
        return "squeue --only-job-state"  # the cheap one: counted apart from the full read
    if argv and argv[0] == "squeue" and "-O" in argv:
        return "squeue -O"  # the at-risk sampler's few running jobs, not a read of the queue
    return " ".join(argv[:3]) if argv and argv[0] == "scontrol" else (argv[0] if argv else "")


class CommandFailed(Exception):
    """A Slurm command exited non-zero; becomes a SourceError."""

    def __init__(self, argv: tuple[str, ...], status: int, message: str) -> None:
        super().__init__(message)
        self.argv, self.status, self.message = argv, status, message

    def source_error(self) -> SourceError:
        where = command_label(self.argv)
        first = self.message.splitlines()[0] if self.message else f"exit status {self.status}"
        if (
            "Unable to contact slurm controller" in self.message
            or "Socket timed out" in self.message
        ):
            return SourceError("unreachable", f"Slurm controller does not answer: {first}", where)
        if self.status == 127:
            return SourceError("command", f"{self.argv[0]} not found on the cluster", where)
        return SourceError("command", f"{where} failed ({self.status}): {first}", where)


def err_text(exc: BaseException) -> str:
    """One line for a failed command or read, as evidence and poll warnings show it."""
    if isinstance(exc, CommandFailed):
        return exc.source_error().message
    return getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
