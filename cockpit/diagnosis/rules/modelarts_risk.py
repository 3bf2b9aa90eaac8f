"""Before it fails, on ModelArts: a training job in Running whose log preview has not changed
for ``RiskSettings.log_silent_s`` (30 min unless the snapshot's probe says otherwise) is a
warning naming its last line and when it was written, as ``job_output_silent`` is for Slurm
and ``startup_log_silent`` for a job still Initializing. The age comes from the line's own
timestamp when it has one, else from when the poller last saw the preview change
(``TrainingJob.log_changed_at``): a preview the source did not read says nothing. The source
reads Running jobs' previews a few a poll (:mod:`cockpit.modelarts.logwatch`), so a preview
may be older than the poll: the silence must hold at the read itself
(``TrainingJob.log_checked_at``), never be assumed from a read long ago.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from cockpit.diagnosis.context import RuleContext, clip
from cockpit.diagnosis.rules.modelarts_startup import silence
from cockpit.diagnosis.rules.slurm_common import fmt_duration
from cockpit.diagnosis.startup_log import strip_time
from cockpit.i18n import _
from cockpit.model import Evidence, Finding, RiskSettings, Subject, TrainingJob, training_log_path


def running_log_silent(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    if job.console_phase != "Running" or not job.log_preview:
        return
    probe = ctx.snapshot.risk
    after = (probe.settings if probe is not None else RiskSettings()).log_silent_s
    got = silence(job, ctx.now)
    if got is None:
        return
    line_no, text, age = got
    checked = job.log_checked_at or ctx.now
    # silent for the threshold as of the read, not only as of now
    if age - max(0.0, (ctx.now - checked).total_seconds()) < after:
        return
    since = (ctx.now - timedelta(seconds=age)).replace(microsecond=0)  # when it was written
    read = (
        "; " + _("as read at {time}").format(time=f"{checked:%H:%M}")
        if job.log_checked_at is not None
        else ""
    )
    yield Finding(
        root_cause="training_log_silent",
        severity="warning",
        subject=Subject("training_job", ctx.snapshot.source, job.job_id, name=job.name),
        title=_("log silent for {mins} min, since {since} (last: {line})").format(
            mins=int(age // 60), since=f"{since:%H:%M}", line=clip(strip_time(text), 60)
        ),
        explanation=_(
            "The job is Running but its log's last line (line {line}) was written at or "
            "before {when} UTC, {ago} ago{read} (threshold {threshold}): a hang (a collective "
            "waiting for a rank that died, a stalled data loader, a mount that stopped answering) "
            "keeps its nodes until the job's own timeout."
        ).format(
            line=line_no,
            when=f"{since:%Y-%m-%d %H:%M}",
            ago=fmt_duration(int(age)),
            read=read,
            threshold=fmt_duration(int(after)),
        ),
        remedy=_(
            "Open the log at that line and the job's monitoring (NPU/GPU utilisation near "
            "{idle} confirms a hang); stop the job and resume from its last checkpoint rather "
            "than wait. A job that only logs per epoch may be fine: raise [risk] log_silent_s."
        ).format(idle="0 %"),
        evidence=(
            Evidence(
                "log",
                text,
                line=line_no,
                path=training_log_path(job.job_id, job.log_task or "worker-0"),
                tier=2,
                quoted=True,
            ),
        ),
        confidence=0.4,
        first_seen=since + timedelta(seconds=int(after)),
    )
