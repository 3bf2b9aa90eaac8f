"""The rule registry: every rule the engine runs, per subject kind, in order.

Adding a rule means writing a function in its family module (``rules/``) and listing it
here. Order matters in two ways: inside a :class:`FirstOf` it is the precedence (the first
rule that finds something is the subject's verdict), and when two rules give a finding
with one key (same cause, same subject) the earlier one's evidence comes first in the merge.
"""

from __future__ import annotations

from cockpit.diagnosis.context import FirstOf, Rule
from cockpit.diagnosis.rules import (
    ascend,
    containers,
    gpu_host,
    modelarts,
    modelarts_risk,
    modelarts_startup,
    slurm_ended,
    slurm_nodes,
    slurm_pending,
    slurm_risk,
    slurm_site,
    storage,
)

# subject kind -> its rules. Kinds: job | node | partition | training_job | pool | site
# (site rules get the Snapshot itself).
RULES: dict[str, tuple[Rule | FirstOf, ...]] = {
    "training_job": (
        FirstOf((modelarts.job_errors, modelarts.job_failed_unexplained)),
        Rule(modelarts.job_queued),
        Rule(modelarts.job_fragmented),
        Rule(modelarts.job_initializing_too_long),
        Rule(modelarts.job_paths),
        Rule(modelarts_startup.job_log_silent),
        Rule(modelarts_risk.running_log_silent),
    ),
    "pool": (Rule(modelarts.pool_abnormal_nodes),),
    "job": (
        FirstOf(
            (
                slurm_pending.requeued_after_node_failure,
                slurm_pending.will_run,
                slurm_pending.never_fits,
                slurm_pending.held_state,
                slurm_pending.launch_failed_held,
                slurm_pending.nodes_unavailable,
                slurm_pending.qos_limit,
                slurm_pending.by_reason,
            ),
            states=slurm_pending.STATES,
        ),
        Rule(slurm_pending.paused, states=slurm_pending.PAUSED),
        FirstOf(
            (
                slurm_ended.rejected_at_submit,
                slurm_ended.out_of_memory,
                slurm_ended.time_limit,
                slurm_ended.cancelled,
                slurm_ended.node_failed,
                slurm_ended.ended_by_state,
                slurm_ended.log_cause,
                slurm_ended.command_not_found_exit,
                slurm_ended.killed_at_memory_limit,
                slurm_ended.ended_by_reason,
                slurm_ended.nonzero_exit,
                slurm_ended.completed,
            ),
            states=slurm_ended.STATES,
        ),
        Rule(slurm_pending.unknown_state),
        Rule(storage.job_write_failed_on_full_fs),
    ),
    "node": (Rule(slurm_nodes.node_state),),
    "partition": (),
    "site": (
        Rule(slurm_site.controller_unreachable),
        Rule(slurm_site.backfill_starvation),
        Rule(slurm_site.priority_surge),
        Rule(slurm_risk.time_limit_near),
        Rule(slurm_risk.memory_near_request),
        Rule(slurm_risk.job_output_silent),
        Rule(slurm_site.unattributed_logs),
        Rule(storage.site_storage),
        # platform lines (CANN codes, pod reasons, Xids) in logs no job or node claims
        Rule(ascend.cann_logs),
        Rule(containers.container_logs),
        Rule(gpu_host.gpu_host_logs),
    ),
}
