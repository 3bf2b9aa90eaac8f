"""The CUDA stack's failure codes as data, for tools/catalogue/curated_cuda.py.

Labels follow the engine's (docs/root-causes.md): a kernel's own fault is the program's
(``application_error``, as the hand-written ``cuda_kernel_fault`` pattern says), a code whose
cause varies keeps the accelerator domain with the generic label, and each ``meaning`` says what
the code is in practice, from the public reports that diagnosed it.
"""

from __future__ import annotations

G = "unrecognised_failure"
OOM = "gpu_out_of_memory"
NOGPU = "gpu_not_available"
BUSY = "accelerator_busy"
DRV = "cuda_driver_mismatch"
HW = "gpu_hardware_error"
APP = "application_error"

# (runtime name, driver API name or "", code, cudaGetErrorString message, label)
CUDA: list[tuple[str, str, int, str, str]] = [
    ("cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", 2, "out of memory", OOM),
    ("cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED", 3, "initialization error", G),
    ("cudaErrorStubLibrary", "CUDA_ERROR_STUB_LIBRARY", 34, "CUDA driver is a stub library", NOGPU),
    (
        "cudaErrorInsufficientDriver",
        "",
        35,
        "CUDA driver version is insufficient for CUDA runtime version",
        DRV,
    ),
    (
        "cudaErrorCallRequiresNewerDriver",
        "",
        36,
        "API call is not supported in the installed CUDA driver",
        DRV,
    ),
    (
        "cudaErrorDevicesUnavailable",
        "CUDA_ERROR_DEVICE_UNAVAILABLE",
        46,
        "CUDA-capable device(s) is/are busy or unavailable",
        BUSY,
    ),
    ("cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", 100, "no CUDA-capable device is detected", NOGPU),
    ("cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", 101, "invalid device ordinal", NOGPU),
    (
        "cudaErrorDeviceNotLicensed",
        "CUDA_ERROR_DEVICE_NOT_LICENSED",
        102,
        "device doesn't have valid Grid license",
        NOGPU,
    ),
    ("cudaErrorStartupFailure", "", 127, "startup failure in cuda runtime", G),
    (
        "cudaErrorNoKernelImageForDevice",
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        209,
        "no kernel image is available for execution on the device",
        DRV,
    ),
    (
        "cudaErrorECCUncorrectable",
        "CUDA_ERROR_ECC_UNCORRECTABLE",
        214,
        "uncorrectable ECC error encountered",
        HW,
    ),
    ("cudaErrorInvalidPtx", "CUDA_ERROR_INVALID_PTX", 218, "a PTX JIT compilation failed", G),
    (
        "cudaErrorNvlinkUncorrectable",
        "CUDA_ERROR_NVLINK_UNCORRECTABLE",
        220,
        "uncorrectable NVLink error detected during the execution",
        HW,
    ),
    (
        "cudaErrorJitCompilerNotFound",
        "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
        221,
        "PTX JIT compiler library not found",
        G,
    ),
    (
        "cudaErrorUnsupportedPtxVersion",
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        222,
        "the provided PTX was compiled with an unsupported toolchain.",
        DRV,
    ),
    (
        "cudaErrorIllegalAddress",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        700,
        "an illegal memory access was encountered",
        APP,
    ),
    (
        "cudaErrorLaunchOutOfResources",
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        701,
        "too many resources requested for launch",
        APP,
    ),
    (
        "cudaErrorLaunchTimeout",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        702,
        "the launch timed out and was terminated",
        G,
    ),
    ("cudaErrorAssert", "CUDA_ERROR_ASSERT", 710, "device-side assert triggered", APP),
    (
        "cudaErrorHardwareStackError",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        714,
        "hardware stack error",
        APP,
    ),
    (
        "cudaErrorIllegalInstruction",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        715,
        "an illegal instruction was encountered",
        APP,
    ),
    ("cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", 716, "misaligned address", APP),
    (
        "cudaErrorInvalidAddressSpace",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        717,
        "operation not supported on global/shared address space",
        APP,
    ),
    ("cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", 718, "invalid program counter", APP),
    ("cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", 719, "unspecified launch failure", APP),
    (
        "cudaErrorSystemNotReady",
        "CUDA_ERROR_SYSTEM_NOT_READY",
        802,
        "system not yet initialized",
        NOGPU,
    ),
    (
        "cudaErrorSystemDriverMismatch",
        "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        803,
        "system has unsupported display driver / cuda driver combination",
        DRV,
    ),
    (
        "cudaErrorCompatNotSupportedOnDevice",
        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        804,
        "forward compatibility was attempted on non supported HW",
        DRV,
    ),
    (
        "cudaErrorMpsConnectionFailed",
        "CUDA_ERROR_MPS_CONNECTION_FAILED",
        805,
        "MPS client failed to connect to the MPS control daemon or the MPS server",
        NOGPU,
    ),
    (
        "cudaErrorMpsRpcFailure",
        "CUDA_ERROR_MPS_RPC_FAILURE",
        806,
        "the remote procedural call between the MPS server and the MPS client failed",
        G,
    ),
    (
        "cudaErrorMpsServerNotReady",
        "CUDA_ERROR_MPS_SERVER_NOT_READY",
        807,
        "MPS server is not ready to accept new MPS client requests",
        NOGPU,
    ),
    (
        "cudaErrorMpsMaxClientsReached",
        "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
        808,
        "the hardware resources required to create MPS client have been exhausted",
        BUSY,
    ),
    (
        "cudaErrorMpsClientTerminated",
        "CUDA_ERROR_MPS_CLIENT_TERMINATED",
        810,
        "the MPS client has been terminated by the server",
        G,
    ),
    ("cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", 999, "unknown error", G),
]

_KERNEL = (
    "A kernel of the program faulted: its bug or a library's (rerun with CUDA_LAUNCH_BLOCKING=1 "
    "to see which call), unless an Xid in dmesg names the GPU; the CUDA context is lost."
)
_DRIVER_OLD = "The node's driver is older than the CUDA toolkit the program was built with."
_MPS = "The GPU is shared through MPS and its server refused or dropped this process."
# what each code is in practice (shared by its message and both names)
MEANING: dict[str, str] = {
    "cudaErrorMemoryAllocation": "The GPU's memory is exhausted, by this job or another "
    "process on the same GPU.",
    "cudaErrorInitializationError": "CUDA could not start in this process: most often CUDA "
    "used in a child forked after the parent initialised it (DataLoader workers, fork), else a "
    "driver left in a bad state by a GPU fault (dmesg: Xid).",
    "cudaErrorStubLibrary": "The process loaded the toolkit's stub libcuda.so (a lib64/stubs "
    "directory on LD_LIBRARY_PATH or in the binary's RUNPATH) instead of the node's driver.",
    "cudaErrorInsufficientDriver": _DRIVER_OLD,
    "cudaErrorCallRequiresNewerDriver": _DRIVER_OLD,
    "cudaErrorDevicesUnavailable": "Every GPU the process may use is held: Exclusive Process "
    "compute mode with another process on it, or a GPU set to Prohibited.",
    "cudaErrorNoDevice": "The process sees no GPU: none allocated (--gres/--gpus), "
    "CUDA_VISIBLE_DEVICES empty or wrong, the devices not passed into the container, or no "
    "driver loaded.",
    "cudaErrorInvalidDevice": "The program asked for a GPU index it does not have (e.g. "
    "set_device(local_rank) when each task sees one GPU).",
    "cudaErrorDeviceNotLicensed": "A virtual GPU without a valid NVIDIA license (license "
    "server unreachable or license expired).",
    "cudaErrorStartupFailure": "The CUDA runtime failed to start: usually a broken or partial "
    "driver installation.",
    "cudaErrorNoKernelImageForDevice": "The program was not built for this GPU's architecture "
    "(compute capability): a GPU newer than the build's arch list, or one it dropped.",
    "cudaErrorECCUncorrectable": "The GPU's memory had an uncorrectable ECC error: the GPU, not "
    "the program.",
    "cudaErrorInvalidPtx": "The driver could not JIT-compile the program's PTX for this GPU, "
    "often a driver older than the toolkit that generated it.",
    "cudaErrorNvlinkUncorrectable": "An uncorrectable NVLink error between GPUs: the hardware "
    "(nvidia-smi nvlink -e), not the program.",
    "cudaErrorJitCompilerNotFound": "The driver's PTX JIT compiler library "
    "(libnvidia-ptxjitcompiler) is missing, as in a container given only part of the driver.",
    "cudaErrorUnsupportedPtxVersion": "The PTX was generated by a newer CUDA toolkit than the "
    "node's driver supports.",
    "cudaErrorIllegalAddress": _KERNEL,
    "cudaErrorLaunchOutOfResources": "A kernel launch asked for more registers, shared memory "
    "or threads per block than the GPU has: the build or the launch configuration.",
    "cudaErrorLaunchTimeout": "A kernel ran past the display watchdog's limit: a GPU that also "
    "drives a display killed it.",
    "cudaErrorAssert": "A kernel assertion failed, most often an index out of range (labels, "
    "embeddings): rerun with CUDA_LAUNCH_BLOCKING=1 to see where.",
    "cudaErrorHardwareStackError": _KERNEL,
    "cudaErrorIllegalInstruction": _KERNEL,
    "cudaErrorMisalignedAddress": _KERNEL,
    "cudaErrorInvalidAddressSpace": _KERNEL,
    "cudaErrorInvalidPc": _KERNEL,
    "cudaErrorLaunchFailure": _KERNEL,
    "cudaErrorSystemNotReady": "The GPUs are not initialised yet: on an NVSwitch server NVIDIA "
    "Fabric Manager (of the driver's exact version) must run first.",
    "cudaErrorSystemDriverMismatch": "The CUDA driver library the process loaded (often a "
    "container's cuda-compat) is not the kernel module's release.",
    "cudaErrorCompatNotSupportedOnDevice": "CUDA forward-compatibility libraries (cuda-compat) "
    "were loaded on a GPU that does not support them (GeForce and workstation GPUs).",
    "cudaErrorMpsConnectionFailed": "The MPS control daemon named by CUDA_MPS_PIPE_DIRECTORY "
    "is not running, or not this user's.",
    "cudaErrorMpsRpcFailure": _MPS,
    "cudaErrorMpsServerNotReady": _MPS,
    "cudaErrorMpsMaxClientsReached": "The GPU's MPS server has all the clients it can take: "
    "other processes share this GPU.",
    "cudaErrorMpsClientTerminated": _MPS,
    "cudaErrorUnknown": "CUDA gave no reason: often the nvidia_uvm module missing or wedged "
    "(after a suspend or a driver update), or a GPU fault (dmesg: Xid).",
}

_NO_DRIVER = "No NVIDIA driver is loaded on the node, or the container was not given it."
_LOST = "The driver lost the GPU (fallen off the bus): drain the node and reset or reboot."
# nvidia-smi's own lines: (template, label, meaning)
NVML: list[tuple[str, str, str]] = [
    (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.",
        NOGPU,
        _NO_DRIVER,
    ),
    (
        "Failed to initialize NVML: Driver/library version mismatch",
        DRV,
        "The driver's libraries were upgraded while the old kernel module stays loaded: reload "
        "the module or reboot the node.",
    ),
    (
        "Failed to initialize NVML: Unknown Error",
        NOGPU,
        "A container lost access to its GPUs (the device cgroup rules reset, e.g. by systemctl "
        "daemon-reload under the systemd cgroup driver): restart the container.",
    ),
    (
        "Failed to initialize NVML: Insufficient Permissions",
        NOGPU,
        "This user may not open the GPU devices (/dev/nvidia*).",
    ),
    ("Unable to determine the device handle for GPU%s: Unknown Error", HW, _LOST),
    ("Unable to determine the device handle for GPU%s: GPU is lost", HW, _LOST),
    ("No devices were found", NOGPU, "nvidia-smi sees no GPU on this node or in this job."),
]
# pynvml's exception classes: (name, NVML's text, label, meaning)
NVML_NAMES: list[tuple[str, str, str, str]] = [
    ("NVMLError_DriverNotLoaded", "Driver Not Loaded", NOGPU, _NO_DRIVER),
    ("NVMLError_LibraryNotFound", "NVML Shared Library Not Found", NOGPU, _NO_DRIVER),
    (
        "NVMLError_LibRmVersionMismatch",
        "RM has detected an NVML/RM version mismatch.",
        DRV,
        "The driver's libraries were upgraded while the old kernel module stays loaded: reload "
        "the module or reboot the node.",
    ),
    (
        "NVMLError_NoPermission",
        "Insufficient Permissions",
        NOGPU,
        "This user may not open the GPU devices (/dev/nvidia*).",
    ),
    ("NVMLError_GpuIsLost", "GPU is lost", HW, _LOST),
    ("NVMLError_ResetRequired", "GPU requires restart", HW, _LOST),
    (
        "NVMLError_CorruptedInforom",
        "Corrupted infoROM",
        HW,
        "The GPU's infoROM is corrupted: the board needs service.",
    ),
]

_HANDLE = (
    "The library could not start on the GPU: usually the GPU's memory already exhausted when it "
    "made its handle (another process, or the framework holding it all), else a toolkit the "
    "driver or the GPU does not support."
)
_EXEC = (
    "A library kernel failed on the GPU: often an earlier kernel fault in the same stream (rerun "
    "with CUDA_LAUNCH_BLOCKING=1), or a build without this GPU's architecture."
)
_INTERNAL = (
    "The library failed inside: often GPU memory exhausted, or library and CUDA versions that "
    "do not match."
)
_ARCH = "The library's build does not support this GPU's architecture."
_LIB_OOM = "The library could not allocate GPU memory: the GPU's memory is exhausted."
_BADARG = "The library rejected a call's arguments: shapes or types it does not support here."
# (status name, header, label, meaning)
LIBS: list[tuple[str, str, str, str]] = [
    ("CUBLAS_STATUS_NOT_INITIALIZED", "cublas_api.h", G, _HANDLE),
    ("CUBLAS_STATUS_ALLOC_FAILED", "cublas_api.h", OOM, _LIB_OOM),
    ("CUBLAS_STATUS_INVALID_VALUE", "cublas_api.h", G, _BADARG),
    ("CUBLAS_STATUS_ARCH_MISMATCH", "cublas_api.h", DRV, _ARCH),
    ("CUBLAS_STATUS_MAPPING_ERROR", "cublas_api.h", G, _INTERNAL),
    ("CUBLAS_STATUS_EXECUTION_FAILED", "cublas_api.h", G, _EXEC),
    ("CUBLAS_STATUS_INTERNAL_ERROR", "cublas_api.h", G, _INTERNAL),
    ("CUBLAS_STATUS_NOT_SUPPORTED", "cublas_api.h", G, _BADARG),
    ("CUDNN_STATUS_NOT_INITIALIZED", "cudnn.h", G, _HANDLE),
    ("CUDNN_STATUS_ALLOC_FAILED", "cudnn.h", OOM, _LIB_OOM),
    ("CUDNN_STATUS_BAD_PARAM", "cudnn.h", G, _BADARG),
    ("CUDNN_STATUS_INTERNAL_ERROR", "cudnn.h", G, _INTERNAL),
    ("CUDNN_STATUS_ARCH_MISMATCH", "cudnn.h", DRV, _ARCH),
    ("CUDNN_STATUS_MAPPING_ERROR", "cudnn.h", G, _INTERNAL),
    ("CUDNN_STATUS_EXECUTION_FAILED", "cudnn.h", G, _EXEC),
    ("CUDNN_STATUS_NOT_SUPPORTED", "cudnn.h", G, _BADARG),
    (
        "CUDNN_STATUS_VERSION_MISMATCH",
        "cudnn.h",
        DRV,
        "cuDNN's sub-libraries of different releases were loaded: two cuDNN installations on "
        "the library path.",
    ),
    ("CUFFT_ALLOC_FAILED", "cufft.h", OOM, _LIB_OOM),
    ("CUFFT_INTERNAL_ERROR", "cufft.h", G, _INTERNAL),
    ("CUFFT_EXEC_FAILED", "cufft.h", G, _EXEC),
    ("CUFFT_SETUP_FAILED", "cufft.h", G, _HANDLE),
    ("CUSOLVER_STATUS_NOT_INITIALIZED", "cusolver_common.h", G, _HANDLE),
    ("CUSOLVER_STATUS_ALLOC_FAILED", "cusolver_common.h", OOM, _LIB_OOM),
    ("CUSOLVER_STATUS_ARCH_MISMATCH", "cusolver_common.h", DRV, _ARCH),
    ("CUSOLVER_STATUS_EXECUTION_FAILED", "cusolver_common.h", G, _EXEC),
    ("CUSOLVER_STATUS_INTERNAL_ERROR", "cusolver_common.h", G, _INTERNAL),
]
