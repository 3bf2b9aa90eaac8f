"""Before it fails, on ModelArts: a training job in Running whose log preview has not changed
for ``RiskSettings.log_silent_s`` (30 min unless the snapshot's probe says otherwise) is a
warning naming its last line and when it was written, as ``job_output_silent`` is for Slurm
and ``startup_log_silent`` for a job still Initializing. The age comes from the line's own
timestamp when it has one, else from when the poller last saw the preview change
(``TrainingJob.log_changed_at``): a preview the source did not read says nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from cockpit.diagnosis.context import RuleContext, clip
from cockpit.diagnosis.rules.modelarts_startup import silence
from cockpit.diagnosis.rules.slurm_common import fmt_duration
from cockpit.diagnosis.startup_log import strip_time
from cockpit.model import Evidence, Finding, RiskSettings, Subject, TrainingJob, training_log_path


def running_log_silent(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    if job.console_phase != "Running" or not job.log_preview:
        return
    probe = ctx.snapshot.risk
    after = (probe.settings if probe is not None else RiskSettings()).log_silent_s
    got = silence(job, ctx.now)
    if got is None or got[2] < after:
        return
    line_no, text, age = got
    since = (ctx.now - timedelta(seconds=age)).replace(microsecond=0)  # when it was written
    yield Finding(
        root_cause="training_log_silent",
        severity="warning",
        subject=Subject("training_job", ctx.snapshot.source, job.job_id, name=job.name),
        title=f"Running, no new log line since {since:%H:%M} (last: {clip(strip_time(text), 60)})",
        explanation=(
            f"The job is Running but its log's last line (line {line_no}) was written at "
            f"{since:%Y-%m-%d %H:%M} UTC, {fmt_duration(int(age))} ago (threshold "
            f"{fmt_duration(int(after))}): a hang (a collective waiting for a rank that died, a "
            "stalled data loader, a mount that stopped answering) keeps its nodes until the "
            "job's own timeout."
        ),
        remedy=(
            "Open the log at that line and the job's monitoring (NPU/GPU utilisation near 0 % "
            "confirms a hang); stop the job and resume from its last checkpoint rather than "
            "wait. A job that only logs per epoch may be fine: raise [risk] log_silent_s."
        ),
        evidence=(
            Evidence(
                "log",
                text,
                line=line_no,
                path=training_log_path(job.job_id, job.log_task or "worker-0"),
                tier=2,
            ),
        ),
        confidence=0.4,
        first_seen=since + timedelta(seconds=int(after)),
    )
