"""torch_npu's summary of a failed HCCL call yields to the line under it that says what failed;
a line that says nothing of its own (another rank's traceback header, a frame under a logger's
ERROR prefix) is not that line: the headline would read "Traceback (most recent call last):"
labelled as the HCCL failure."""

from __future__ import annotations

from cockpit.diagnosis.logscan import first_error

_HCCL = (
    b"RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL "
    b"function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, "
    b"&(comm->hcclComm_)), error code is 15\n"
)
_W = b"(VllmWorker rank=1 pid=97934) ERROR 04-01 08:04:%02d [multiproc_executor.py:383] "


def test_another_ranks_traceback_header_under_the_summary_is_not_the_cause():
    # two ranks fail together: rank 1's traceback starts under rank 0's summary
    log = (
        _HCCL
        + b"Traceback (most recent call last):\n"
        + b'  File "train.py", line 9, in <module>\n'
    )
    h = first_error(log)
    assert h is not None and "Traceback" not in h.text, (h.line, h.text)
    assert (h.line, h.label) == (1, "nccl_communication_error")


def test_a_prefixed_frame_under_the_summary_is_passed_for_the_cann_line_below_it():
    log = (
        _W % 31 + _HCCL
        + _W % 31 + b"    work = group.broadcast([tensor], opts)\n"
        + _W % 31 + b"EE9999: [PID: 97934] 2025-04-01-08:04:31.591.683 get error: phyid:5 "
        b"realDeviceId:5 is err:0x7010003\n"
        + _W % 32 + b"    more = frame(here)\n"
    )  # fmt: skip
    h = first_error(log)
    assert h is not None and h.line == 3, (h.line, h.text)
    assert h.label == "nccl_communication_error"
