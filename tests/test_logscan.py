"""First-red-error scanner: cascades, harmless lines, hostile bytes, properties."""

from __future__ import annotations

import mmap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.diagnosis.logscan import first_error, iter_errors
from cockpit.diagnosis.logscan_pieces import first_error_in_pieces
from cockpit.diagnosis.patterns import PATTERNS, classify
from cockpit.ingest.logfile import scan_path


def test_root_cause_before_cascade():
    log = (
        b"epoch 1\n"
        b"/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed   python3 main.py\n"
        b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup.\n"
        b"Bus error (core dumped)\n"
    )
    h = first_error(log)
    assert (h.line, h.label, h.strong) == (3, "oom_killed", True)
    assert h.offset == log.index(b"slurmstepd")


def test_a_traceback_header_yields_to_the_exception_that_ends_it():
    log = (
        b"INFO:tensorflow:Total 3301 files found in s3://bucket/data/\n"
        b"Traceback (most recent call last):\n"
        b'  File "finetune_model.py", line 262, in main\n'
        b'    raise ValueError("learning_rate_strategy should be like: e_0:l_0,...")\n'
        b"ValueError: learning_rate_strategy should be like: e_0:l_0,...\n"
    )
    h = first_error(log)
    assert (h.line, h.label, h.strong) == (5, "application_error", False)
    assert h.text.startswith("ValueError: learning_rate_strategy")
    # a line naming a cause still wins over both
    oom = log + b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert (first_error(oom).line, first_error(oom).label) == (6, "gpu_out_of_memory")
    # a header whose exception line is not in the log stays the first red error
    assert first_error(log.split(b"ValueError: learning")[0]).line == 2


def test_a_traceback_yields_to_its_exception_line_when_a_weak_cause_claims_it():
    log = (
        b"Traceback (most recent call last):\n"
        b'  File "train.py", line 210, in <module>\n'
        b"    _error_if_any_worker_fails()\n"
        b"RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.\n"
    )
    h = first_error(log)
    assert (h.line, h.label, h.strong) == (4, "oom_killed", False)
    # the same through the chunked scan of a stream, the header and its exception in two pieces
    cut = log.index(b"RuntimeError")
    h = first_error_in_pieces([(0, 1, log[:cut]), (cut, 4, log[cut:])])
    assert (h.line, h.label) == (4, "oom_killed")


@pytest.mark.parametrize(
    "line,label",
    [
        (b"IOError: [Errno 116] Stale file handle", "storage_stale_handle"),
        (
            b"RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus error. It is "
            b"possible that dataloader's workers are out of shared memory.",
            "shared_memory_exhausted",
        ),
        (
            b"torch.distributed.DistNetworkError: The client socket has timed out after 60s "
            b"while trying to connect to (10.0.0.1, 29500).",
            "mpi_network_error",
        ),
        (b"RuntimeError: No CUDA GPUs are available", "gpu_not_available"),
        (
            b"InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: all "
            b"CUDA-capable devices are busy or unavailable",
            "accelerator_busy",
        ),
        (
            b"Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy",
            "accelerator_busy",
        ),
        (
            b"slurmstepd: error: container_p_join: open failed /scratch/7/.active: No such file "
            b"or directory",
            "job_launch_failed",
        ),
        ("./run.sh: 行 18: srun: 未找到命令".encode(), "command_not_found"),
        ("./run.sh: 行 18: srun: 未找到命令".encode("gbk"), "command_not_found"),
        (b"mmremote: GPFS is not ready to handle commands yet.", "storage_mount_failed"),
        (
            b"c011: Reason=apply ntpd fix : reboot issued : reboot timed out [slurm@2021-09-17]",
            "node_boot_failed",
        ),
        (
            b"RuntimeError: Thread ID 1397 Unexpected error. This is not the mnist image file: "
            b"/mnist/train/train-images-idx3-ubyte",
            "input_data_invalid",
        ),
        (
            b"  Warning  Pending  4m  kueue-admission  couldn't assign flavors to pod set job: "
            b"resource cpu unavailable in ClusterQueue",
            "queued_quota_limit",
        ),
        (b"srun: error: Only allocated 3 nodes asked for 9", "submit_rejected_unsatisfiable"),
        (
            b"RuntimeError: Address already in use at /pytorch/torch/lib/THD/process_group/"
            b"General.cpp:20",
            "mpi_network_error",
        ),
        (b"cuda error(2).out of memory.", "gpu_out_of_memory"),
        (b"srun: error: gpu001: task 0: Out Of Memory", "oom_killed"),
        (
            b"RuntimeError: unable to open shared memory object </torch_29919_1396182366> in "
            b"read-write mode",
            "shared_memory_exhausted",
        ),
        (b"Failed to initialize NVML: Driver/library version mismatch", "cuda_driver_mismatch"),
        (
            b"  sbatch: error: Batch job submission failed: Invalid feature specification",
            "submit_rejected_unsatisfiable",
        ),
        (
            b"sbatch: error: Batch job submission failed: Invalid job array specification",
            "submit_rejected_policy",
        ),
        (
            b"salloc: error: Job submit/allocate failed: Access/permission denied",
            "submit_rejected_policy",
        ),
        (
            b"EE1001: [PID: 42] 2025-11-18-09:33:13.673.064 The argument is invalid.Reason: set "
            b"ASCEND_RT_VISIBLE_DEVICES:4 error, input data rang[0-2)",
            "gpu_not_available",
        ),
        (
            b"urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', "
            b"port=443): Max retries exceeded with url: /x/config.json (Caused by "
            b"ConnectTimeoutError(<urllib3.connection.HTTPSConnection object>, 'timed out'))",
            "storage_connection_error",
        ),
        (
            b"PermissionError: [Errno 13] Permission denied: '/determined_shared_fs/2613'",
            "storage_access_denied",
        ),
        (
            b"EZ9999: 2024-05-17-01:30:26.960.959  Op Cast does not has any binary.",
            "missing_shared_library",
        ),
        (
            b"Unable to determine the device handle for GPU0000:05:00.0: Unknown Error",
            "gpu_hardware_error",
        ),
        (
            b"  what():  [enforce fail at gloo/transport/tcp/device.cc:83] ifa != nullptr. "
            b"Unable to find address for: enp129s0f1",
            "mpi_network_error",
        ),
        (
            b"[enforce fail at gloo/transport/tcp/pair.cc:144] ... Connection refused",
            "mpi_network_error",
        ),
        (
            b"Unable to determine the device handle for GPU 0000:3b:00.0: GPU is lost. "
            b"Reboot the system to recover this GPU",
            "gpu_hardware_error",
        ),
        (b"sbatch: error: No gpu count given, specify --gres=gpu", "submit_rejected_policy"),
        (
            b"sbatch: error: batch job submission failed: requested reservation is invalid",
            "submit_rejected_policy",
        ),
        (
            b"sbatch: error: Batch job submission failed: Invalid generic resource (gres) "
            b"specification",
            "submit_rejected_unsatisfiable",
        ),
        (
            b"Non-OK-status: GpuLaunchKernel(FillPhiloxRandomKernelLaunch<Distribution>, "
            b"num_blocks, block_size, 0, d.stream(), gen, data, size, dist) status: Internal: "
            b"out of memory",
            "gpu_out_of_memory",
        ),
    ],
)
def test_producers_messages_name_their_cause(line, label):
    h = first_error(b"step 1\n" + line + b"\n")
    assert (h.line, h.label, h.strong) == (2, label, True), line


@pytest.mark.parametrize(
    "code,label",
    [(-9, "oom_killed"), (-7, "shared_memory_exhausted"), (-11, "application_error")],
)
def test_a_launchers_negative_return_code_names_the_signal_class(code, label):
    ds = f"[ERROR] [launch.py:434:sigkill_handler] ['python'] exits with return code = {code}"
    elastic = f"api:failed (exitcode: {code}) local_rank: 0 (pid: 4242) of binary: /usr/bin/python"
    for line in (ds, elastic):
        h = first_error(b"Killing subprocess 4242\n" + line.encode() + b"\n")
        assert (h.line, h.label, h.strong) == (2, label, False), line
    assert first_error(b"exits with return code = -90\n") is None


def test_an_uncaught_cxx_exception_is_cited_by_its_message_not_the_abort():
    log = (
        b"step 1 ok\n"
        b"terminate called after throwing an instance of 'std::runtime_error'\n"
        b"  what():  frobnicator state invalid\n"
        b"Aborted (core dumped)\n"
    )
    h = first_error(log)
    assert (h.line, h.label, h.strong) == (3, "application_error", False)
    # behind a launcher's rank prefix too
    pre = b"Tue Nov 10 10:05:04 2020[13]<stderr>:"
    h = first_error(b"".join(pre + ln + b"\n" for ln in log.splitlines()))
    assert (h.line, h.label) == (3, "application_error")


@pytest.mark.parametrize("enc", ["utf-8", "gbk"])
def test_bash_signal_messages_in_a_chinese_locale(enc):
    crash = first_error(
        "第 11 轮\n./train.sh: 行 3: 4242 段错误 (核心已转储) python train.py\n".encode(enc)
    )
    assert (crash.line, crash.label, crash.pattern) == (2, "application_error", "crash")
    killed = first_error("loading\n已杀死\n".encode(enc))
    assert (killed.line, killed.label, killed.strong) == (2, "oom_killed", False)


def test_srun_waiting_is_no_error_and_its_cancel_is():
    log = (
        b"srun: job 2630692 queued and waiting for resources\n"
        b"srun: Job has been cancelled\n"
        b"srun: error: Unable to allocate resources: Job/step already completing or completed\n"
    )
    h = first_error(log)
    assert (h.line, h.label) == (2, "cancelled_by_user")


def test_timeout_before_later_application_errors():
    log = (
        b"working\nslurmstepd: error: *** JOB 1 ON c1 CANCELLED "
        b"AT 2026-11-29T20:29:29 DUE TO TIME LIMIT ***\n"
        b"Traceback (most recent call last):\nOSError: [Errno 5] Input/output error\n"
    )
    assert first_error(log).label == "time_limit"


def test_harmless_lines_are_skipped():
    log = (
        b"srun: error: mpi/pmix_v3: init: (null) [0]: "
        b"mpi_pmix.c:193: pmi/pmix: can not load PMIx library\n"
        b"slurmctld: error: Could not open job state file "
        b"/var/spool/slurm/job_state: No such file or directory\n"
        b"all good\n"
    )
    assert first_error(log) is None
    assert list(iter_errors(log)) == []


def test_step_memory_warning_on_completed_job_is_only_a_symptom():
    log = b"slurmstepd: error: Exceeded step memory limit at some point.\ndone\n"
    h = first_error(log)
    assert h is not None and not h.strong and h.severity == "warning"


def test_crlf_ansi_invalid_utf8_gbk():
    log = (
        "日志开始\r\n".encode()
        + b"\x1b[1;31mERROR\x1b[0m: \xff\xfe broken bytes\r\n"
        + "错误: 磁盘 No space left on device\r\n".encode("gbk")
    )
    h = first_error(log)
    assert (h.line, h.label) == (3, "disk_full")
    assert h.text == "错误: 磁盘 No space left on device"  # GBK decoded, CR gone
    errs = list(iter_errors(log))
    assert [e.line for e in errs] == [2, 3]
    assert (
        errs[0].text.startswith("ERROR: ")
        and "\x1b" not in errs[0].text
        and "\r" not in errs[0].text
    )


def test_ten_megabyte_line():
    log = (
        b"x" * (10 * 1024 * 1024)
        + b" CUDA driver version is insufficient for CUDA runtime version\nnext\n"
    )
    h = first_error(log)
    assert h.line == 1 and h.offset == 0 and h.label == "cuda_driver_mismatch"
    assert len(h.text) <= 70 * 1024


def test_iter_errors_resumes_from_offset():
    log = b"a\nerror: one\nb\nerror: two\n"
    errs = list(iter_errors(log))
    assert [(e.line, e.text) for e in errs] == [(2, "error: one"), (4, "error: two")]
    again = list(iter_errors(log, start_offset=errs[0].offset + len(b"error: one\n"), start_line=3))
    assert [(e.line, e.offset) for e in again] == [(4, errs[1].offset)]


def test_scan_path_mmap_and_empty(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert scan_path(str(empty)) is None
    f = tmp_path / "slurm-3.out"
    f.write_bytes(
        b"starting analysis\n/tmp/x/slurm_script: line 5: run_analysis: command not found\n"
    )
    h = scan_path(str(f))
    assert (h.line, h.label) == (2, "command_not_found")
    with open(f, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert first_error(mm) == h


def test_daemon_logs_skip_generic_noise():
    log = b"[2026-01-01T00:00:00] error: some routine complaint\n"
    assert first_error(log, kind="slurmd").strong is False  # only the daemon 'error:' symptom
    assert first_error(b"[t] Launching batch job 4\n", kind="slurmctld") is None


def test_every_pattern_compiles_and_matches_its_own_example():
    examples = {
        "slurm_time_limit": (
            b"*** JOB 5 ON c1 CANCELLED AT 2020-01-01T00:00:00 DUE TO TIME LIMIT ***"
        ),
        "nccl": (
            b"h:15:91 [3] include/socket.h 398 NCCL WARN Call "
            b"to write failed : Connection reset by peer."
        ),
        "mpi_network": b"slurmd: error: connect io: Connection refused",
        "gpu_fault": b"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
        "disk_quota": b"cp: cannot create regular file 'x': Disk quota exceeded",
        "k8s_mount_failed": (
            b"  Warning  FailedMount  18m  kubelet  MountVolume.SetUp failed for volume"
        ),
    }
    for name, line in examples.items():
        assert classify(line).name == name
    assert len({p.name for p in PATTERNS}) == len(PATTERNS)


_lines = st.lists(
    st.one_of(
        st.binary(max_size=80).map(lambda b: b.replace(b"\n", b"")),
        st.sampled_from(
            [
                b"Killed",
                b"error: x",
                b"\x1b[31mERROR\x1b[0m",
                b"No space left on device\r",
                b"Detected 1 oom-kill event(s)",
                "错误".encode("gbk"),
                b"\xff\xfe\xfd",
            ]
        ),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(_lines)
def test_property_never_raises_and_lines_match_bytes(lines):
    buf = b"\n".join(lines)
    hits = list(iter_errors(buf))
    first = first_error(buf)
    for h in hits:
        # the offset is a line start and the line number counts the newlines before it
        assert h.offset == 0 or buf[h.offset - 1 : h.offset] == b"\n"
        assert h.line == buf.count(b"\n", 0, h.offset) + 1
    assert [h.line for h in hits] == sorted({h.line for h in hits})
    if first is not None:
        assert first.line in {h.line for h in hits}
        strong = [h for h in hits if h.strong]
        assert first == (strong[0] if strong else hits[0])
    else:
        assert hits == []


# ---------------------------------------------------------------- GPU / NPU out of memory


def test_cuda_oom_beats_the_traceback_above_it():
    log = (
        b"epoch 1 step 10 loss 2.3\n"
        b"Traceback (most recent call last):\n"
        b'  File "train.py", line 10, in <module>\n'
        b"torch.cuda.OutOfMemoryError: CUDA out of memory. "
        b"Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)\n"
        b"Exception raised from malloc\n"
    )
    h = first_error(log)
    assert (h.line, h.label, h.strong) == (4, "gpu_out_of_memory", True)


def test_gpu_and_npu_oom_lines_are_labelled():
    lines = [
        b"RuntimeError: CUDA out of memory. Tried to allocate "
        b"20.00 MiB (GPU 0; 15.78 GiB total capacity)",
        b"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        b"cudaMalloc failed: cudaErrorMemoryAllocation",
        b"h:15:91 [3] NCCL WARN Cuda failure 'out of memory'",
        b"RuntimeError: NPU out of memory. Tried to allocate "
        b"1.50 GiB (NPU 0; 60.97 GiB total capacity)",
        b"[ERROR] RUNTIME(3057,python):2024-05-01-10:00:01.123 "
        b"[npu_driver.cc:1010] halMemAlloc failed: out of memory",
        b"E39999: Inner Error! EL0004: Failed to allocate memory.",
    ]
    for line in lines:
        h = first_error(b"Traceback (most recent call last):\n" + line + b"\n")
        assert (h.line, h.label) == (2, "gpu_out_of_memory"), line


def test_host_ram_oom_is_not_a_gpu_oom():
    assert (
        classify(b"Memory cgroup out of memory: Killed process 4242 (python)").label == "oom_killed"
    )
    assert (
        classify(b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=7.batch").label
        == "oom_killed"
    )
    assert (
        classify(b"fatal error: runtime: out of memory").label == "application_error"
    )  # Go, host RAM


def test_nccl_unhandled_cuda_error_names_the_oom_below_it():
    log = (
        b"step 3\n"
        b"torch.distributed.DistBackendError: NCCL error in: "
        b"ProcessGroupNCCL.cpp:1275, unhandled cuda error "
        b"(run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3\n"
        b"ncclUnhandledCudaError: Call to CUDA function failed.\n"
        b"Last error:\n"
        b"Cuda failure 'out of memory'\n"
    )
    h = first_error(log)
    assert (h.line, h.label, h.offset) == (5, "gpu_out_of_memory", log.index(b"Cuda failure"))
    # without the OOM below, the label stays NCCL's, and the headline is still NCCL's own
    # message under "Last error:" (PyTorch's summary names only the error class)
    plain = log.replace(b"Cuda failure 'out of memory'", b"Cuda failure 'an illegal memory access'")
    assert (first_error(plain).line, first_error(plain).label) == (5, "nccl_communication_error")
    # with no message under "Last error:", PyTorch's summary line is the first red error
    empty = log.replace(b"Cuda failure 'out of memory'\n", b"\nException raised from x\n")
    assert (first_error(empty).line, first_error(empty).label) == (2, "nccl_communication_error")


def test_scan_log_cli_reports_the_gpu_oom(tmp_path, capsys):
    from cockpit.cli import main

    f = tmp_path / "slurm-9.out"
    f.write_bytes(
        b"Traceback (most recent call last):\n"
        b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    assert main(["scan-log", str(f)]) == 0  # as grep: found
    assert f"{f}:2: [gpu_out_of_memory] RuntimeError: CUDA out of memory" in capsys.readouterr().out


# ---------------------------------------------------------------- files and pipes, read in chunks


def _case_logs():
    import pathlib

    root = pathlib.Path(__file__).parent / "fixtures" / "cases"
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".toml")


@pytest.mark.parametrize("chunk", [64, 4096])
def test_chunked_file_scan_agrees_with_the_whole_buffer(monkeypatch, chunk):
    import cockpit.ingest.logfile as ls

    monkeypatch.setattr(ls, "CHUNK", chunk)  # tiny chunks: every line boundary case is exercised
    for path in _case_logs():
        data = path.read_bytes()
        kind = ls.guess_kind(str(path))
        whole = ls.first_error(data, kind=kind) if data else None
        got = ls.scan_path(str(path))
        assert (got and (got.line, got.offset, got.label)) == (
            whole and (whole.line, whole.offset, whole.label)
        ), path
        assert [(h.line, h.offset) for h in ls.iter_path(str(path))] == [
            (h.line, h.offset) for h in ls.iter_errors(data, kind=kind)
        ], path


def test_scan_reads_a_pipe(tmp_path):
    import os
    import threading

    import cockpit.ingest.logfile as ls

    fifo = tmp_path / "zcat.out"
    os.mkfifo(fifo)
    body = b"step 1\nstep 2\nslurmstepd: error: Detected 1 oom-kill event(s) in StepId=5.batch.\n"
    writer = threading.Thread(target=lambda: fifo.write_bytes(body))
    writer.start()
    hit = ls.scan_path(str(fifo))
    writer.join()
    assert hit is not None and hit.line == 3 and hit.label == "oom_killed"


_VOCAB = [
    b"step 1 loss 0.5",
    b"error: retrying connection",
    b"WARNING: deprecated flag",
    b"Traceback (most recent call last):",
    b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    b"ERROR 0 errors found",
    b"failed to open x",
    b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=7.batch",
    b"/bin/sh: fastqc: command not found",
    b"NCCL WARN unhandled cuda error",
    b"ValueError: learning_rate_strategy should be like: 'e_0:l_0'",
    b"x" * 300,
    b"",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), max_size=60), st.sampled_from([16, 64, 200]))
def test_chunked_scan_equals_the_whole_buffer_on_any_mix(tmp_path_factory, lines, chunk):
    """One regex pass per piece (strong and weak together until the first weak hit) finds
    what first_error finds over the whole file, wherever the piece boundaries fall."""
    import cockpit.ingest.logfile as ls

    data = b"\n".join(lines) + (b"\n" if lines else b"")
    path = tmp_path_factory.mktemp("mix") / "app.log"
    path.write_bytes(data)
    old = ls.CHUNK
    ls.CHUNK = chunk
    try:
        got = ls.scan_path(str(path))
    finally:
        ls.CHUNK = old
    whole = ls.first_error(data, kind="app") if data else None
    assert (got and (got.line, got.offset, got.label, got.strong)) == (
        whole and (whole.line, whole.offset, whole.label, whole.strong)
    )


@pytest.mark.parametrize("chunk", [16, 64, 4096])
def test_stream_scan_counts_every_line_and_byte_when_nothing_is_red(chunk):
    """The reader reuses its buffers between pieces: what it says it read (the bundle's note,
    'no error line in its N lines') is still the whole stream's, the last piece included."""
    import io

    import cockpit.ingest.logfile as ls

    body = b"".join(b"step %d loss 0.%d\n" % (i, i) for i in range(500)) + b"last line, no newline"
    scan = ls.scan_stream(io.BytesIO(body[10:]), head=body[:10], chunk=chunk)
    assert scan.hit is None and scan.complete
    assert (scan.bytes_read, scan.lines_read) == (len(body), 501)


def test_a_line_logged_at_error_level_is_an_error_not_a_warning():
    """'ERROR: input file … not found' is the log's error; the viewer counted it a warning
    ('0 errors', `e` found nothing) while diagnose named it the first red error."""
    from cockpit.diagnosis.logscan import iter_errors

    for text in (
        b"starting\nERROR: input file /data/missing.csv not found\n",
        b"2026-12-05 08:00:01 ERROR main: checkpoint unreadable\n",
        b"[FATAL] cannot continue\n",
    ):
        (hit,) = list(iter_errors(text))
        assert (hit.severity, hit.strong) == ("critical", False), text
    quiet = b"INFO epoch 3 done, 0 errors\nvalidation: error rate 0.02\n"
    assert all(h.severity != "critical" for h in iter_errors(quiet))
