"""A missing program as each shell says it: bash, dash (sbatch --wrap, /bin/sh on Debian) and
busybox ash (alpine images, a ModelArts custom image without bash): the last was no error
line at all, so the failed training job's startup log opened at line 1, nothing marked."""

from __future__ import annotations

import pytest

from cockpit.diagnosis.logscan import first_error


@pytest.mark.parametrize(
    "line",
    [
        "bash: fastqc: command not found",
        "/var/spool/slurmd/job12/slurm_script: 4: fastqc: not found",
        "/bin/sh: 1: python3: not found",
        "/bin/sh: bash: not found",
        "sh: torchrun: not found",
    ],
)
def test_each_shell_saying_a_program_is_missing(line):
    hit = first_error(f"starting\n{line}\n".encode())
    assert hit is not None and hit.line == 2 and hit.label == "command_not_found", hit


def test_a_sentence_with_not_found_is_not_a_missing_program():
    assert first_error(b"epoch 3: best checkpoint not found yet, keeping the last\n") is None
