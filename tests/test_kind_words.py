"""The structural fixes for the commonest misses on unseen reports (SEARCH_LOG.md, "Why unseen
reports miss"): a line whose words name a kind no pattern holds as a sentence (kind words), a
failure said without an error word, and an umbrella summary below the line carrying its cause.
Each line here is in no bundle of the corpus and in no pattern's own wording."""

from __future__ import annotations

import pytest

from cockpit.diagnosis.kind_words import kind_of_line
from cockpit.ingest.bundle import diagnose_bundle


def _diagnose(tmp_path, name: str, text: str) -> dict:
    (tmp_path / name).write_text(text)
    return diagnose_bundle(str(tmp_path)).to_json()


@pytest.mark.parametrize(
    "text,label,headline",
    [
        # Gloo's own resolver failure inside a Python traceback: was an application error
        (
            "Traceback (most recent call last):\n"
            '  File "train.py", line 3, in <module>\n'
            "RuntimeError: ProcessGroupGloo: Unable to resolve hostname node7 for rank 3\n",
            "mpi_network_error",
            "RuntimeError: ProcessGroupGloo: Unable to resolve hostname node7 for rank 3",
        ),
        # a tool refusing a file without the word "error": was silent before batch 25's fixes
        (
            "cp: cannot open '/data/in.h5' for reading: Permission denied\n",
            "storage_access_denied",
            "cp: cannot open '/data/in.h5' for reading: Permission denied",
        ),
        # srun's umbrella summary under the line that names the node: the node's line heads
        (
            "srun: error: fwd_tree_thread: failed to resolve node c12\n"
            "srun: error: Application launch failed: Communication connection failure\n",
            "job_launch_failed",
            "srun: error: fwd_tree_thread: failed to resolve node c12",
        ),
        # sbatch's policy umbrella under the limit that refused the job
        (
            "sbatch: error: Reached jobs per user limit\n"
            "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
            "(job submit limit, user's size and/or time limits)\n",
            "submit_rejected_policy",
            "sbatch: error: Reached jobs per user limit",
        ),
    ],
)
def test_unknown_sentence_of_a_known_kind(tmp_path, text, label, headline):
    report = _diagnose(tmp_path, "job.err", text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"] == headline


def test_a_summary_carrying_slurms_own_error_stays_the_headline(tmp_path):
    # the plugin line above is noise; "Invalid partition name specified" is the cause's words
    report = _diagnose(
        tmp_path,
        "submit.txt",
        "sbatch: error: spank: x11.so: Plugin file not found\n"
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n",
    )
    assert report["first_error"]["text"].endswith("Invalid partition name specified")


def test_kind_words_name_the_most_specific_kind():
    assert kind_of_line("slurmstepd: error: execve(): /spool/slurm_script: Permission denied")[
        0
    ] == ("job_launch_failed")
    assert kind_of_line("OSError: [Errno 28] No space left on device: '/tmp/x'")[0] == "disk_full"
    assert kind_of_line("ValueError: learning rate must be positive") is None


def test_a_recognised_cause_is_not_relabelled(tmp_path):
    # a CUDA OOM line that also says "Permission denied" elsewhere keeps the OOM it names
    report = _diagnose(
        tmp_path,
        "train.log",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        "cp: cannot open '/data/x': Permission denied\n",
    )
    assert report["findings"][0]["root_cause"] == "gpu_out_of_memory"


def test_a_producers_template_keeps_its_domain():
    # slurmstepd's job_container failure ends in a generic errno: a launch failure (its
    # catalogue template's domain), never a missing input path
    line = (
        "[2026-12-04T10:00:00.123] [4242.0] error: Failed to create job container: "
        "No such file or directory"
    )
    assert kind_of_line(line) is None
    # the same errno words in a program's own line do name a missing path
    assert kind_of_line("OSError: [Errno 2] No such file or directory: 'data/train.json'")[0] == (
        "input_path_not_found"
    )


def test_a_failed_jobs_kind_named_by_its_line_reads_line_then_exit(tmp_path):
    # a job that exited 1 with a line no rule knows but whose words name the kind: the
    # headline names the line and keeps the exit, as the rules' own headlines do
    (tmp_path / "slurm-77.out").write_text("starting\nERROR: GPU 3 has fallen off the bus\ndone\n")
    (tmp_path / "sacct.txt").write_text("JOBID|STATE|EXITCODE\n77|FAILED|1:0\n")
    report = diagnose_bundle(str(tmp_path)).to_json()
    (job,) = [f for f in report["findings"] if f["subject"] == "job 77"]
    assert job["root_cause"] == "gpu_hardware_error"
    assert job["title"] == ("gpu hardware error: ERROR: GPU 3 has fallen off the bus (exit 1)"), (
        job["title"]
    )
