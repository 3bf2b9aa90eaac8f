"""The CUDA stack's own catalogues (cuda, nvml, cuda_libs: tools/catalogue/curated_cuda.py) in
the lines public reports quote, under wrappers the generated tests do not print: onnxruntime's
``CUDA failure 804:``, a gpufetch ``[ERROR]:``, PyTorch's UserWarning from
cudaGetDeviceCount, cudarc's ``DriverError(…)``, TensorFlow's stream executor, pynvml.

Lines are quoted from the public reports named beside them (hosts and stamps as there).
"""

from __future__ import annotations

import pytest

from cockpit.diagnosis import catalogue
from cockpit.diagnosis.domains import domain_of_line
from cockpit.diagnosis.logscan import first_error
from cockpit.ingest.bundle import diagnose_bundle

CUDA_SOURCES = ("cuda", "nvml", "cuda_libs")


def _label(line: str) -> str | None:
    hit = first_error(line.encode() + b"\n")
    return hit.label if hit is not None and hit.strong else None


@pytest.mark.parametrize(
    ("line", "label"),
    [
        # Dr-Noob/gpufetch#53 (a GeForce GTX 970 given cuda-compat)
        (
            "[ERROR]: cudaErrorCompatNotSupportedOnDevice: forward compatibility was attempted "
            "on non supported HW",
            "cuda_driver_mismatch",
        ),
        # rapidsai/cusignal#398
        (
            "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice"
            ": forward compatibility was attempted on non supported HW",
            "cuda_driver_mismatch",
        ),
        # microsoft/onnxruntime#21435
        (
            "CUDA failure 804: forward compatibility was attempted on non supported HW",
            "cuda_driver_mismatch",
        ),
        # a pip build log quoting PyTorch's warning (CUDA error 803 under a stale compat library)
        (
            "/usr/local/lib/python3.8/dist-packages/torch/cuda/__init__.py:83: UserWarning: CUDA "
            "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? "
            "Error 803: system has unsupported display driver / cuda driver combination "
            "(Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:109.)",
            "cuda_driver_mismatch",
        ),
        # cudarc's Display of a DriverError (a Rust service's log)
        (
            'backend op failed: DriverError(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has '
            'unsupported display driver / cuda driver combination")',
            "cuda_driver_mismatch",
        ),
        # xmake-io/xmake#4686: the toolkit's lib64/stubs on LD_LIBRARY_PATH
        ("CUDA API Error at line 28: CUDA driver is a stub library", "gpu_not_available"),
        # NVIDIA/FasterTransformer#275: the same, as the driver API's name
        ("The error code is: CUDA_ERROR_STUB_LIBRARY", "gpu_not_available"),
        # TensorFlow on a node without a GPU
        (
            "2024-02-03 10:12:01.123456: E external/local_xla/xla/stream_executor/cuda/"
            "cuda_driver.cc:274] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable "
            "device is detected",
            "gpu_not_available",
        ),
        (
            "RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon "
            "or the MPS server",
            "gpu_not_available",
        ),
        ("RuntimeError: CUDA error: unspecified launch failure", "application_error"),
        ("pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "gpu_not_available"),
        (
            "NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
            "cuda_driver_mismatch",
        ),
        ("Failed to initialize NVML: Unknown Error", "gpu_not_available"),
        ("No devices were found", "gpu_not_available"),
        ("No devices were found\r", "gpu_not_available"),  # a log pasted from Windows
        ("CUFFT_ALLOC_FAILED", "gpu_out_of_memory"),
    ],
)
def test_cuda_stack_lines_name_their_cause(line, label):
    assert _label(line) == label, line


def test_no_devices_in_someone_elses_prose_is_not_nvidia_smi():
    """nvidia-smi's ``No devices were found`` is its whole line; the same words inside another
    program's sentence name no GPU."""
    line = "No devices were found with support for (announce), please add a device"
    assert _label(line) != "gpu_not_available"


@pytest.mark.parametrize(
    "line",
    [
        # carpedm20/deep-rl-tensorflow#43
        "2018-05-28 23:08:09.915921: E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could "
        "not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
        # tensorflow/tensor2tensor#1127
        "2018-10-09 14:57:07.460399: E tensorflow/stream_executor/cuda/cuda_blas.cc:464] failed "
        "to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED",
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( "
        "handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
        "RuntimeError: CUDA error: the launch timed out and was terminated",
        "RuntimeError: CUDA error: unknown error",
    ],
)
def test_a_gpu_library_failure_is_routed_to_the_accelerator(line, tmp_path):
    """A status that names no single cause is still the GPU stack's failure, never the
    program's own exception nor "nothing wrong": an unrecognised failure in the accelerator
    domain, headed by that line."""
    assert domain_of_line(line) == "accelerator"
    (tmp_path / "train.log").write_text(f"epoch 1 step 10 loss=2.31\n{line}\n")
    report = diagnose_bundle(str(tmp_path)).to_json()
    top = report["findings"][0]
    assert (top["root_cause"], top["domain"]) == ("unrecognised_failure", "accelerator"), top
    assert report["first_error"]["text"] == line


def test_catalogue_agrees_with_the_hand_written_patterns():
    """Where a hand-written strong pattern already read a template's line (CUDA error 802, the
    Fabric Manager, ECC, out of memory), the catalogue keeps that pattern's label."""
    mine = [t for t in catalogue.templates() if t.source in CUDA_SOURCES]
    assert len(mine) > 120
    known = [t for t in mine if t.known_strong]
    assert known and all(t.label == t.known_label for t in known)


def test_every_cuda_code_has_its_message_and_names_with_one_label():
    """A code's message, runtime name and driver name say the same cause (a CuPy line and a
    TensorFlow line of one code are diagnosed alike)."""
    by_code: dict[str, set[str]] = {}
    for t in catalogue.templates():
        if t.source == "cuda":
            key = t.message or t.template.removeprefix("CUDA error: ")
            by_code.setdefault(key, set()).add(t.label)
    assert len(by_code) >= 30
    assert all(len(labels) == 1 for labels in by_code.values()), by_code
