"""Slurm's daemons on their own configuration and the scheduler's words in an operator's prose:
what slurmctld and slurmd say when a node's registration or the controller's slurm.conf is
refused, when configless slurmd cannot fetch its configuration, when a step is cancelled for a
task's failure, and a pending reason named after the word "reason" in a sentence or an issue
template (not a squeue row). Spliced into :data:`cockpit.diagnosis.patterns.PATTERNS` after
the pending reasons quoted as squeue cells.
"""

from __future__ import annotations

import re

from cockpit.diagnosis import slurm_codes
from cockpit.diagnosis.pattern_base import NOT_DAEMON, Pattern
from cockpit.diagnosis.pattern_base import spec as _p


def _pending_reasons_in_prose() -> tuple[Pattern, ...]:
    """ "holds with reason QOSMaxMemoryPerUser", "reason: AssocGrpCPUMinutesLimit": a code named
    after the word reason (scontrol's ``Reason=`` is a record's field, read as such). The codes
    after which a job does not start by itself, and every QOS/association limit: a user asking
    why a job holds on a running-usage limit is told which limit, not nothing."""
    by_label: dict[str, list[str]] = {}
    for code, r in sorted(slurm_codes.REASONS.items()):
        if r.outcome in {"admin", "user", "depends"} or r.label == "pending_qos_limit":
            by_label.setdefault(r.label, []).append(re.escape(code))
    return tuple(
        _p(
            f"pending_reason_prose_{label}",
            r"\b[Rr]eason:?[ \t]+(?:" + "|".join(codes) + r")\b",
            label,
            "warning",
            tier=0,
            kinds=NOT_DAEMON,
        )
        for label, codes in by_label.items()
    )


SLURM_DAEMONS: tuple[Pattern, ...] = (
    # slurm.conf does not describe the node that registers: slurmctld refuses the registration
    # (its only words, when the hardware line before it was at debug level), slurmd finds no
    # NodeName for its host, slurmctld refuses a file that defines a node twice (and exits)
    _p(
        "slurm_conf_node_refused",
        r"_slurm_rpc_node_registration node=\S+(?:: |, time=\d+, error=)Invalid argument|"
        r"Unable to determine this slurmd's NodeName|"
        r"Duplicated NodeHost[Nn]ame \S+ in (?:the )?config file",
        "node_config_mismatch",
        tier=1,
    ),
    # configless slurmd (or a client) asks slurmctld for slurm.conf and gets no valid answer
    _p(
        "slurm_configless_fetch",
        r"failed to fetch remote configs|fetch_config: DNS SRV lookup failed",
        "controller_unreachable",
        tier=0,
    ),
    # slurmstepd cancels a step when one of its tasks fails (srun --kill-on-bad-exit): the
    # program's own failure, whatever sacct records afterwards
    _p(
        "slurm_step_task_failure",
        r"CANCELLED AT \S+ DUE TO TASK FAILURE",
        "application_error",
        tier=1,
    ),
    *_pending_reasons_in_prose(),
)
