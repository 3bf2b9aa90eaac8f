"""Unseen batch 30's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 373, 376, 377, 380 and 381 hold the first).
"""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose

_DEEPSPEED_3160 = (
    "[2023-04-07 13:09:33,220] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python3', "
    "'-u', 'run_clm.py', '--local_rank=0', '--deepspeed', 'ds_config_stage2_hf.json', "
    "'--model_name_or_path', 'EleutherAI/gpt-j-6B', '--fp16'] exits with return code = -9"
)


def _wrapped(line: str, width: int) -> list[str]:
    # a terminal's hard wrap: every `width` characters, words cut where they fall
    return [line[i : i + width] for i in range(0, len(line), width)]


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # glibc's zh_CN EACCES from coreutils: a Kafka install note's "real error at the first
        # systemd start" (found with find_string; the index names no repository), Kafka's own
        # consequence after it
        (
            "kafka-start.log",
            'mkdir: 无法创建目录 "/opt/kafka/bin/../logs": 权限不够\n'
            "Error opening log file '/opt/kafka/bin/../logs/kafkaServer-gc.log': No such file "
            "or directory\n",
            "storage_access_denied",
            'mkdir: 无法创建目录 "/opt/kafka/bin/../logs": 权限不够',
        ),
        # touch on an NFS export the client may not write (a Chinese NFS set-up note, its
        # root prompt kept)
        (
            "终端.txt",
            "[root@example-com public_mount]# touch hello.py\n"
            'touch: 无法创建"hello.py": 权限不够\n',
            "storage_access_denied",
            'touch: 无法创建"hello.py": 权限不够',
        ),
        # glibc's zh_CN ENOSPC inside a Java service's stack trace (a ZooKeeper outage note)
        (
            "zookeeper.log",
            "2024-08-08 16:22:36,643 [myid:] - ERROR [SyncThread:1:o.a.z.s.ZooKeeperCriticalThread"
            "@49] - Severe unrecoverable error, from thread : SyncThread:1\n"
            "java.io.IOException: 设备上没有空间\n"
            "        at java.base/java.io.FileOutputStream.writeBytes(Native Method)\n",
            "disk_full",
            "java.io.IOException: 设备上没有空间",
        ),
        # ENOSPC from a semaphore: CPython's own reproduction (python/cpython#93253, docker run
        # --shm-size=1m), the exception under multiprocessing's SemLock frame
        (
            "repro.txt",
            "Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.8/multiprocessing/synchronize.py", line 187, in '
            "__init__\n"
            "    SemLock.__init__(self, RECURSIVE_MUTEX, 1, 1, ctx=ctx)\n"
            '  File "/usr/local/lib/python3.8/multiprocessing/synchronize.py", line 57, in '
            "__init__\n"
            "    sl = self._semlock = _multiprocessing.SemLock(\n"
            "OSError: [Errno 28] No space left on device\n",
            "shared_memory_exhausted",
            "OSError: [Errno 28] No space left on device",
        ),
        # the same collapsed into one line by a chat (conductor-oss/python-sdk#132's title)
        (
            "issue.txt",
            "When I tried to start client with 8 workers , error occured: "
            "_multiprocessing.SemLock(OSError: [Errno 28] No space left on device\n",
            "shared_memory_exhausted",
            "When I tried to start client with 8 workers , error occured: "
            "_multiprocessing.SemLock(OSError: [Errno 28] No space left on device",
        ),
        # joblib's probe alone, no exception after it (SigProfilerSuite/SigProfilerExtractor#95)
        (
            "session.txt",
            ">>> from SigProfilerExtractor import sigpro as sig\n"
            "/home/hannan/anaconda3/lib/python3.7/site-packages/joblib/_multiprocessing_helpers"
            ".py:53: UserWarning: [Errno 28] No space left on device.  joblib will operate in "
            "serial mode\n",
            "shared_memory_exhausted",
            "/home/hannan/anaconda3/lib/python3.7/site-packages/joblib/_multiprocessing_helpers"
            ".py:53: UserWarning: [Errno 28] No space left on device.  joblib will operate in "
            "serial mode",
        ),
        # DeepSpeed's launcher line (deepspeedai/DeepSpeed#3160) as a 100-column terminal wraps
        # it: the child's code stands two lines under the handler's prefix
        (
            "train.log",
            "[2023-04-07 13:09:33,201] [INFO] [launch.py:318:sigkill_handler] Killing subprocess"
            " 80\n" + "\n".join(_wrapped(_DEEPSPEED_3160, 100)) + "\n",
            "oom_killed",
            "rAI/gpt-j-6B', '--fp16'] exits with return code = -9",
        ),
    ],
)
def test_second_wording(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"] == headline


def test_a_disk_full_without_a_semaphore_stays_a_disk(tmp_path):
    # pyarrow writing a datasets cache (LlamaFactory#275, case 131's kind): a real disk
    report = _diagnose(
        tmp_path,
        "train.log",
        '  File "/root/miniconda3/lib/python3.8/site-packages/fsspec/implementations/local.py",'
        " line 382, in write\n"
        "    return self.f.write(*args, **kwargs)\n"
        "OSError: [Errno 28] No space left on device\n",
    )
    assert report["findings"][0]["root_cause"] == "disk_full"


def test_a_warning_alone_is_still_the_headline(tmp_path):
    # a warning with no exception after it stays the cited line (never silent)
    text = (
        "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA "
        "initialization: CUDA driver initialization failed, you might not have a CUDA gpu.\n"
        "training on cpu\n"
    )
    report = _diagnose(tmp_path, "run.log", text)
    assert report["first_error"]["text"] == text.splitlines()[0]


def test_a_pending_reason_quoted_alone_stays_the_cause(tmp_path):
    # the wait is the report when nothing failed after it (case 369's kind)
    report = _diagnose(
        tmp_path,
        "issue.txt",
        'the job was pending because of "ReqNodeNotAvail, UnavailableNodes:c002"\n'
        "any idea when it starts?\n",
    )
    assert report["findings"][0]["root_cause"] == "pending_node_unavailable"


def test_a_step_run_cites_its_first_line_but_a_cancel_keeps_its_own(tmp_path):
    # slurmstepd's cancel line is the job's fact even after step errors above it
    cancel = (
        "slurmstepd: error: *** JOB 4242 ON n001 CANCELLED AT 2024-01-01T10:00:00 DUE TO TIME "
        "LIMIT ***"
    )
    report = _diagnose(
        tmp_path,
        "slurm-4242.out",
        "slurmstepd: error: mpi/pmix_v3: _errhandler: n001 [0]: pmixp_client_v2.c:212: Error "
        "handler invoked: status = -25, source = [slurm.pmix.4242.0:1]\n" + cancel + "\n",
    )
    assert report["findings"][0]["root_cause"] == "time_limit"
    assert report["first_error"]["text"] == cancel
