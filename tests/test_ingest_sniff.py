"""What operators paste, recognised by content: each test is a small synthetic paste of one
kind and asserts what an operator would notice (the job, node or cause the paste shows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.ingest.bundle import diagnose_bundle, load_bundle
from cockpit.ingest.sniff import sniff
from cockpit.ingest.split import prompt_command, split_parts


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("COCKPIT_STRICT_RULES", "1")


def paste(tmp_path: Path, text: str, name: str = "paste.txt") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def report(tmp_path: Path, text: str, name: str = "paste.txt") -> dict:
    return diagnose_bundle(str(paste(tmp_path, text, name))).to_json()


def top(tmp_path: Path, text: str, name: str = "paste.txt") -> tuple[str, str, dict | None]:
    r = report(tmp_path, text, name)
    f = r["findings"][0]
    return f["root_cause"], f["subject"], r["first_error"]


def jobs(tmp_path: Path, text: str, name: str = "paste.txt") -> dict:
    snap = load_bundle(str(paste(tmp_path, text, name))).snapshot
    return {j.job_id: j for j in snap.jobs}


# --------------------------------------------------------------------------- split


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("$ squeue -u bob", "squeue -u bob"),
        ("[user1@login01 ~]$ sacct -j 42", "sacct -j 42"),
        ("[user1@login01:~]$ myjobs", "myjobs"),
        ("user1@login01:~/runs$ seff 42", "seff 42"),
        ("(base) user1@gpu01:~$ nvidia-smi", "nvidia-smi"),
        ("bash-4.2$ sinfo -R", "sinfo -R"),
        ("# journalctl -u slurmd --since today", "journalctl -u slurmd --since today"),
        ("\x1b[01;32muser1@login01\x1b[00m:\x1b[01;34m~\x1b[00m$ squeue", "squeue"),
        ("squeue -u bob", "squeue -u bob"),  # an echoed command on a line of its own
        ("scontrol show job 42", "scontrol show job 42"),
        ("$", ""),  # a prompt with nothing typed ends the previous output
    ],
)
def test_prompts_and_echoes_are_recognised(line, command):
    assert prompt_command(line) == command


@pytest.mark.parametrize(
    "line",
    [
        "# this script trains the model",  # a comment, not a root prompt
        "#SBATCH --mem=4G",
        "50% done",
        "mpirun noticed that process rank 0 exited on signal 9",
        "sbatch: error: Batch job submission failed: Invalid account",
        "[2024-05-01T10:00:00] error: x",
    ],
)
def test_log_lines_are_not_prompts(line):
    assert prompt_command(line) is None


def test_a_session_splits_at_prompts_keeping_file_line_numbers(tmp_path):
    text = (
        "[user1@login01 ~]$ squeue -u user1\n"
        "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n"
        "[user1@login01 ~]$ sacct -j 77\n"
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
        "77                train        gpu      acct1          8 OUT_OF_ME+    0:125 \n"
        "77.batch          batch                 acct1          8 OUT_OF_ME+    0:125 \n"
        "[user1@login01 ~]$ \n"
    )
    parts = split_parts(text.encode())
    assert [(p.command, p.line) for p in parts] == [("squeue -u user1", 2), ("sacct -j 77", 4)]
    cause, subject, first = top(tmp_path, text)
    assert (cause, subject) == ("oom_killed", "job 77")
    assert first["file"] == "paste.txt" and first["line"] == 6  # the sacct row, not part line


# --------------------------------------------------------------------------- squeue


def test_squeue_with_right_aligned_wide_columns(tmp_path):
    text = (
        "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES "
        "NODELIST(REASON)\n"
        "          12345678       gpu    train    user1  PENDING       0:00   1:00:00      2 "
        "(PartitionDown)\n"
    )
    j = jobs(tmp_path, text)["12345678"]
    assert (j.state, j.reason, j.node_count, j.partition) == ("PENDING", "PartitionDown", 2, "gpu")


def test_squeue_grep_without_header_is_recognised_by_its_rows(tmp_path):
    text = (
        "$ squeue | grep user1\n"
        "   4201   compute  align.sh    user1 PD       0:00      1 (QOSMaxJobsPerUserLimit)\n"
        "   4202   compute  align.sh    user1  R    1:02:03      1 cn07\n"
    )
    js = jobs(tmp_path, text)
    assert js["4201"].reason == "QOSMaxJobsPerUserLimit" and js["4202"].nodes == ("cn07",)
    cause, subject, first = top(tmp_path, text)
    assert subject == "job 4201" and first["line"] == 2


def test_squeue_start_and_pipe_formats(tmp_path):
    start = (
        "JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES"
        "           NODELIST(REASON)\n"
        "  901       gpu     big    user2 PD 2024-06-01T10:00:00      4 gn[01-04]"
        "            (Resources)\n"
    )
    j = jobs(tmp_path, start, "start.txt")["901"]
    assert j.reason == "Resources" and j.start_time is not None
    piped = (
        "JOBID|PARTITION|NAME|USER|STATE|TIME|NODES|NODELIST(REASON)\n"
        "902|gpu|x|u|PENDING|0:00|1|(Priority)\n"
    )
    assert jobs(tmp_path, piped, "p.txt")["902"].reason == "Priority"


def test_a_site_wrapper_with_its_own_columns(tmp_path):
    text = (
        "[user1@login01 ~]$ myq\n"
        "Job_ID   User    Queue/QOS     Status   Elapsed   Limit     Nodes Reason\n"
        "5501     user1   long/normal   PENDING  0:00      7-00:00   1     AssocGrpCPULimit\n"
    )
    j = jobs(tmp_path, text)["5501"]
    assert (j.state, j.reason, j.user) == ("PENDING", "AssocGrpCPULimit", "user1")


# --------------------------------------------------------------------------- sacct, seff, sprio


def test_sacct_parsable2_and_headerless_default(tmp_path):
    p2 = "JobID|State|ExitCode|Elapsed|Timelimit\n88|TIMEOUT|0:0|01:00:00|01:00:00\n"
    assert top(tmp_path, "$ sacct -X --parsable2 -j 88\n" + p2)[:2] == ("time_limit", "job 88")
    bare = "$ sacct\n   31        bwa      short      acct1          4  CANCELLED+      0:0\n"
    snap = load_bundle(str(paste(tmp_path, bare, "s.txt"))).snapshot
    assert [(j.job_id, j.state) for j in snap.jobs] == [("31", "CANCELLED")]


def test_seff_of_a_job_killed_for_memory(tmp_path):
    text = (
        "$ seff 1234\n"
        "Job ID: 1234\nCluster: hpc\nUser/Group: user1/group1\n"
        "State: OUT_OF_MEMORY (exit code 0)\nNodes: 1\nCores per node: 4\n"
        "CPU Utilized: 00:10:00\nCPU Efficiency: 50.00% of 00:20:00 core-walltime\n"
        "Job Wall-clock time: 00:05:00\nMemory Utilized: 3.95 GB\n"
        "Memory Efficiency: 98.75% of 4.00 GB\n"
    )
    assert top(tmp_path, text)[:2] == ("oom_killed", "job 1234")
    rec = load_bundle(str(paste(tmp_path, text, "seff.txt"))).artifacts.acct[0]
    assert (rec.req_mem_mib, rec.max_rss_mib) == (4096, 4045)


def test_sprio_is_a_table_not_a_log(tmp_path):
    text = (
        "$ sprio -j 77\n"
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE\n"
        "             77 gpu           10523          0       1000       9500         23\n"
    )
    b = load_bundle(str(paste(tmp_path, text)))
    assert [f.role for f in b.files] == ["sprio"] and not b.artifacts.logs


# --------------------------------------------------------------------------- scontrol, sinfo


def test_scontrol_show_job_and_node_blocks(tmp_path):
    text = (
        "$ scontrol show job 61\n"
        "JobId=61 JobName=train\n   UserId=user1(1001) GroupId=g(1001)\n"
        "   JobState=PENDING Reason=ReqNodeNotAvail,_UnavailableNodes:gn03 Dependency=(null)\n"
        "   Partition=gpu NumNodes=1 NumCPUs=8\n"
        "\n$ scontrol show node gn03\n"
        "NodeName=gn03 Arch=x86_64 CoresPerSocket=16\n   State=DOWN+DRAIN ThreadsPerCore=1\n"
        "   Reason=Xid 79 GPU has fallen off the bus [root@2024-05-01T10:00:00]\n"
    )
    b = load_bundle(str(paste(tmp_path, text)))
    assert [f.role for f in b.files] == ["scontrol_job", "scontrol_node"]
    node = b.snapshot.nodes[0]
    assert node.name == "gn03" and node.is_drain and "fallen off the bus" in node.reason


def test_sinfo_r_under_any_name_and_headerless_sinfo(tmp_path):
    text = (
        "REASON               USER      TIMESTAMP           NODELIST\n"
        "Not responding       slurm     2024-01-25T15:12:23 cn[01-02]\n"
    )
    b = load_bundle(str(paste(tmp_path, text, "nodes.txt")))
    assert {n.name for n in b.snapshot.nodes} == {"cn01", "cn02"}
    assert top(tmp_path, text, "nodes.txt")[0] == "node_not_responding"


# --------------------------------------------------------------------------- logs


@pytest.mark.parametrize(
    ("name", "text", "role_kind"),
    [
        (
            "x.log",
            "[2024-05-01T10:00:00.000] _job_complete: JobId=5 WEXITSTATUS 1\n",
            ("log", "slurmctld"),
        ),
        ("ctld.txt", "_slurm_rpc_submit_batch_job: JobId=9 InitPrio=1\n", ("log", "slurmctld")),
        (
            "a.txt",
            "[2024-05-01T10:00:00.000] Launching batch job 5 for UID 1000\n",
            ("log", "slurmd"),
        ),
        (
            "a.txt",
            "[  12.345678] Out of memory: Killed process 4242 (python)\n[  12.5] oom_reaper\n",
            ("log", "dmesg"),
        ),
        (
            "a.txt",
            "mpirun noticed that process rank 3 exited on signal 9 (Killed).\n",
            ("log", "mpi"),
        ),
        (
            "a.txt",
            "web_1  | starting\nweb_1  | stat:404\nworker_1  | ok\n",
            ("log", "docker"),
        ),
        (
            "a.txt",
            "[ERROR] HCCL(12345,python):2024-05-01-10:00:00 [hccl_op.cc:10] EI0006: timeout\n",
            ("log", "cann"),
        ),
        (
            "run.log",
            "2024-05-01 ERROR submit: sbatch: error: Batch job submission failed: Invalid qos\n",
            ("log", "pipeline"),
        ),
        ("prolog.log", "+ mkdir /scratch/job\n", ("log", "prolog")),
        ("slurm-12.out", "hello\n", ("log", "stdout")),
    ],
)
def test_logs_are_recognised_by_content(name, text, role_kind):
    assert sniff(name, text.encode()) == role_kind


def test_a_command_hint_names_journal_and_dmesg_output():
    assert sniff("paste", b"anything\n", "journalctl -u slurmd")[1] == "journal"
    assert sniff("paste", b"anything\n", "sudo dmesg -T")[1] == "dmesg"


def test_docker_compose_prefix_is_cut_for_matching_but_kept_in_the_evidence(tmp_path):
    text = (
        "Attaching to job_worker_1\n"
        "\x1b[36mworker_1  |\x1b[0m downloading obs://bucket/data/train.csv\n"
        "\x1b[36mworker_1  |\x1b[0m stat:404\n"
    )
    cause, _, first = top(tmp_path, text, "compose.log")
    assert cause == "input_path_not_found"  # "^stat:404" matched only without the prefix
    assert first["line"] == 3 and first["text"] == "worker_1  | stat:404"


def test_a_pipeline_quoting_sbatch_names_the_submit_cause(tmp_path):
    text = (
        "INFO:submit.py:10: submitting 12 jobs\n"
        "ERROR:submit.py:44: job 3 failed: stderr='sbatch: error: Batch job submission failed: "
        "Invalid account or account/partition combination specified'\n"
    )
    assert top(tmp_path, text, "pipeline.log")[0] == "submit_rejected_policy"


def test_a_prolog_trace_failing_is_a_prolog_failure(tmp_path):
    text = "+ /usr/bin/enroot-mount --root\nenroot-mount: failed to mount /run/enroot\n"
    assert top(tmp_path, text, "epilog-output.log")[0] == "node_drain_prolog_epilog_failed"


def test_mpirun_names_the_network_cause_not_the_orte_boilerplate(tmp_path):
    text = (
        "$ mpirun -np 4 --hostfile hosts ./a.out\n"
        "--------------------------------------------------------------------------\n"
        "ORTE was unable to reliably start one or more daemons.\n"
        "--------------------------------------------------------------------------\n"
        "[cn01:01234] [[1234,0],1] tcp_peer_send_blocking: send() to socket 9 failed: "
        "Connection refused (111)\n"
    )
    cause, _, first = top(tmp_path, text, "mpi.txt")
    assert cause == "mpi_network_error" and first["line"] == 5


def test_kubectl_describe_pod_events(tmp_path):
    text = (
        "Events:\n  Type     Reason     Age   From     Message\n"
        "  ----     ------     ----  ----     -------\n"
        '  Warning  Failed     2m    kubelet  Failed to pull image "swr.example.com/a/b:v9": '
        "manifest unknown\n"
    )
    assert top(tmp_path, text, "describe.txt")[0] == "image_pull_failed"


def test_modelarts_job_json_is_a_training_job(tmp_path):
    text = (
        '{"kind": "job", "metadata": {"id": "11111111-2222-4333-8444-555555555555", "name": "t"},'
        ' "status": {"phase": "Failed", "secondary_phase": "Failed", "duration": 1000}}'
    )
    b = load_bundle(str(paste(tmp_path, text, "job.txt")))
    assert b.snapshot.kind == "modelarts" and b.snapshot.training_jobs[0].name == "t"


def test_cann_device_memory_code_in_a_plog(tmp_path):
    text = (
        "[INFO] RUNTIME(1234,python):2024-05-01-10:00:00.000 [runtime.cc:1] init ok\n"
        "[ERROR] RUNTIME(1234,python):2024-05-01-10:00:01.000 [npu_driver.cc:2] EL0004: "
        "Failed to allocate memory.\n"
    )
    cause, _, first = top(tmp_path, text, "plog-1234.log")
    assert cause == "gpu_out_of_memory" and first["line"] == 2


def test_sacct_with_a_header_realigned_in_the_paste(tmp_path):
    """A ticket's paste moved sacct's header words off their ruler ("State" astride two
    columns): the rows were read under "STATE E" and "ITCODE", no state, and the bundle said
    "nothing looks wrong" of a job that ran out of memory (a new-user trial)."""
    f = tmp_path / "paste.txt"
    f.write_text(
        "[oncall@login01 ~]$ sacct -j 5551 -o JobID,State,ExitCode,ReqMem,MaxRSS\n"
        "JobID           State ExitCode     ReqMem     MaxRSS\n"
        "------------ ---------- -------- ---------- ----------\n"
        "5551         OUT_OF_ME+    0:125        32G\n"
        "5551.batch   OUT_OF_ME+    0:125                33.1G\n"
    )
    top = diagnose_bundle(str(f)).to_json()["findings"][0]
    assert top["root_cause"] == "oom_killed"
    assert "MaxRSS 33.1G" in top["title"] and "ReqMem 32G" in top["title"]
    assert "--mem=40G" in top["remedy"]


def test_sacct_whose_spaces_an_editor_turned_into_tabs(tmp_path):
    """An editor that saves runs of spaces as tabs (vim's noexpandtab, ``unexpand -a``) kept
    sacct's layout at tab stops of 8, but the table was sliced by character: 'OUT_OF_ME+'
    landed under no State column and the job that ran out of memory was 'nothing looks
    wrong'."""
    f = tmp_path / "paste.txt"
    f.write_text(
        "JobID\t\tJobName\t\t\t\t    State   ExitCode\t ReqMem\t    MaxRSS    Elapsed\n"
        "------------ ------------------------------ ---------- -------- ---------- ----------"
        " ----------\n"
        "4811\t      train_big\t\t\t    OUT_OF_ME+\t  0:125\t       32G\t\t00:10:02\n"
        "4811.batch    batch\t\t\t    OUT_OF_ME+\t  0:125\t\t      33.1G\t00:10:02\n"
    )
    top = diagnose_bundle(str(f)).to_json()["findings"][0]
    assert top["root_cause"] == "oom_killed"
    assert "MaxRSS 33.1G" in top["title"] and "ReqMem 32G" in top["title"]
