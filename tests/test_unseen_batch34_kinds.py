"""Unseen batch 34's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 426, 427 and 430 hold the first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,headline",
    [
        # slurmstepd's STEP and JOB lines interleaved by a tqdm bar and srun's timestamps, then
        # torchrun's SIGTERM traceback (a Palmetto user's paste into a chat, found with
        # find_string 'DUE TO PREEMPTION ***')
        (
            "train.err",
            " 45%|████▌     | 723/1602 [2:12:45<2:59:53, 12.28s/it][2026-03-25T10:34:07.530] "
            "error: *** STEP 11509447.0 ON nodeau01 CANCELLED [2026-03-25T10:34:07.531] error: "
            "*** JOB 11509447 ON nodeau01 CANCELLED AT 2026-03-25T10:34:07 DUE TO PREEMPTION ***\n"
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 3045566 got "
            "signal: 15\n",
            " 45%|████▌     | 723/1602 [2:12:45<2:59:53, 12.28s/it][2026-03-25T10:34:07.530] "
            "error: *** STEP 11509447.0 ON nodeau01 CANCELLED [2026-03-25T10:34:07.531] error: "
            "*** JOB 11509447 ON nodeau01 CANCELLED AT 2026-03-25T10:34:07 DUE TO PREEMPTION ***",
        ),
        # preemption said in prose: a GKE preemptible GPU node taken back (kubeflow/trainer#999)
        (
            "notes.txt",
            "When a gke gpu node is preempted, it is recreated. The TFJob's worker pod is killed "
            "and disappeared.\n",
            "When a gke gpu node is preempted, it is recreated. The TFJob's worker pod is killed "
            "and disappeared.",
        ),
    ],
)
def test_preemption_is_the_event_wherever_it_is_said(tmp_path, name, text, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == "preempted"
    assert report["first_error"]["text"] == headline


def test_the_state_word_quoted_in_prose_yields_to_a_line_saying_why(tmp_path):
    # a monitor's logic quoted (MFlowCode/MFC PR #1771: '"PREEMPTED is non-terminal"') above
    # the step's own OOM line: the bare state word is talk about a state, not the event
    report = _diagnose(
        tmp_path,
        "ci.log",
        'The monitor treats "PREEMPTED is non-terminal, wait for the requeue".\n'
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n",
    )
    assert report["findings"][0]["root_cause"] == "oom_killed"
    assert "oom-kill" in report["first_error"]["text"]


@pytest.mark.parametrize(
    "row,reason",
    [
        # a site's squeue -o with columns after %R (CPUs, memory), the tgen/phoenix#33 layout,
        # with the held reason squeue prints as words and a pending Dependency (constructed in
        # that layout: no second public row of it was found)
        (
            " 80520_36\tn2 get_phone_alignments.sh kkm PD\t0:00\t  1 "
            "(launch failed requeued held) 1 4000M\n",
            "pending_launch_failed_held",
        ),
        (
            "11575725_[0-7]\twork1 veremi-e haotias PD\t0:00\t  1 (Dependency) 8 80G\n",
            "pending_dependency",
        ),
    ],
)
def test_a_reason_cell_before_more_columns_is_the_reason(tmp_path, row, reason):
    report = _diagnose(tmp_path, "squeue.txt", row)
    assert report["findings"][0]["root_cause"] == reason


def test_a_null_cell_after_the_state_is_no_reason(tmp_path):
    # '(null)' is what squeue prints for an empty feature or dependency column
    report = _diagnose(
        tmp_path, "squeue.txt", " 4242\tbatch train alice R\t1:00\t  1 node01 (null) 8\n"
    )
    assert not any(f["root_cause"].startswith("pending_") for f in report["findings"])
