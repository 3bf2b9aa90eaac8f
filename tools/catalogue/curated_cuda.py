"""Curated catalogues of the CUDA stack: the runtime and driver API, NVML / nvidia-smi, and the
status names of cuBLAS, cuDNN, cuFFT and cuSOLVER.

    python3 tools/catalogue/curated_cuda.py [--check DIR]

Unseen reports of GPU jobs keep quoting these producers in their own words, under any wrapper
(PyTorch's ``RuntimeError: CUDA error: …``, TensorFlow's ``failed call to cuInit:
CUDA_ERROR_NO_DEVICE: …``, CuPy's ``CUDARuntimeError: cudaErrorNoDevice: …``, numba's
``CudaAPIError: [100] … CUDA_ERROR_NO_DEVICE``, nvidia-smi's lines). Each CUDA code gives up to
three templates: the ``cudaGetErrorString`` message (a message too short to name CUDA alone,
``out of memory``, is kept in PyTorch's ``CUDA error: `` form), the runtime name
(``driver_types.h``) and the driver API name (``cuda.h``), with the code number and what it
means in practice. The labels agree with the hand-written patterns (``annotate`` gives a
template a strong pattern already reads that pattern's verdict).

``--check DIR`` verifies the table against the producers before writing: DIR holds the
``nvidia-cuda-runtime-cu11/cu12`` wheels unpacked (``nvidia_cuda_runtime_cu12-12.4.127/``…:
every message must be a string of that release's ``libcudart.so``, every name and number an
enumerator of its ``driver_types.h`` / ``cuda.h``) and ``nvml/pynvml.py`` of nvidia-ml-py
(pynvml's exception names and texts). Writes cockpit/diagnosis/catalogue/{cuda,nvml,
cuda_libs}.json.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, write  # noqa: E402
from cuda_table import CUDA, LIBS, MEANING, NVML, NVML_NAMES  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

# the libcudart releases the table was checked against (``--check``)
CUDA_V = ["11.8", "12.1", "12.4", "12.8"]
NVML_V = ["12.570"]
LIBS_V = ["cuBLAS 11-12", "cuDNN 8-9", "cuFFT 10-11", "cuSOLVER 11"]
WORD_END = r"\b"
# PyTorch's form of a message too short to name CUDA by itself
SHORT = frozenset(
    {
        "out of memory",
        "initialization error",
        "unknown error",
        "hardware stack error",
        "invalid program counter",
        "misaligned address",
    }
)
DOMAIN = {
    "gpu_out_of_memory": "accelerator",
    "gpu_not_available": "accelerator",
    "accelerator_busy": "accelerator",
    "cuda_driver_mismatch": "accelerator",
    "gpu_hardware_error": "accelerator",
    "application_error": "application",
    GENERIC: "accelerator",
}


def _entry(template, level, origin, versions, label, meaning, **extra) -> dict:
    remedy = REMEDY["accelerator"] if label == GENERIC else ""
    e = entry(template, level, origin, versions, DOMAIN[label], label, remedy)
    if extra.get("suffix"):
        e["regex"] += extra["suffix"]
    if extra.get("prefix"):
        e["regex"] = extra["prefix"] + e["regex"]
    extra.pop("prefix", None)
    e.update({k: v for k, v in extra.items() if v not in ("", None)})
    if meaning:
        e["meaning"] = meaning
    return e


def cuda_entries() -> list[dict]:
    out = []
    for rt, drv, code, message, label in CUDA:
        meaning = MEANING[rt]
        what = f"cudaGetErrorString({rt} = {code})"
        tpl = f"CUDA error: {message}" if message in SHORT else message
        origin = f"libcudart.so: {what}; driver_types.h"
        out.append(_entry(tpl, "error", origin, CUDA_V, label, meaning, code=code))
        out.append(
            _entry(
                rt,
                "runtime_name",
                f"driver_types.h: enum cudaError {rt} = {code}",
                CUDA_V,
                label,
                meaning,
                suffix=WORD_END,
                message=message,
                code=code,
            )
        )
        if drv:
            out.append(
                _entry(
                    drv,
                    "driver_name",
                    f"cuda.h: enum cudaError_enum {drv} = {code}",
                    CUDA_V,
                    label,
                    meaning,
                    suffix=WORD_END,
                    message=message,
                    code=code,
                )
            )
    return [e | {"program": "cuda"} for e in out]


def nvml_entries() -> list[dict]:
    out = []
    for template, label, meaning in NVML:
        whole = template == "No devices were found"  # nvidia-smi's whole line, never in prose
        out.append(
            _entry(
                template,
                "error",
                "nvidia-smi (NVIDIA driver, closed source): as public reports quote it",
                ["driver"],
                label,
                meaning,
                prefix="^" if whole else "",
                suffix=r"[ \t\r]*$" if whole else "",
            )
        )
    for name, text, label, meaning in NVML_NAMES:
        out.append(
            _entry(
                name,
                "runtime_name",
                "nvidia-ml-py: pynvml.py (NVMLError._errcode_to_string, "
                "_extractNVMLErrorsAsClasses)",
                NVML_V,
                label,
                meaning,
                suffix=WORD_END,
                message=text,
            )
        )
    return [e | {"program": "nvml"} for e in out]


def libs_entries() -> list[dict]:
    out = []
    for name, header, label, meaning in LIBS:
        # cuDNN 9 splits a status into sub-codes (CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER):
        # the family's name then matches its sub-codes too
        suffix = "" if name.startswith("CUDNN_") else WORD_END
        out.append(
            _entry(name, "error", f"{header}: status enum", LIBS_V, label, meaning, suffix=suffix)
        )
    return [e | {"program": "cuda_libs"} for e in out]


def check(root: Path) -> list[str]:
    """Where the table disagrees with the producers' files under ``root`` (empty: it agrees)."""
    bad = []
    for version in CUDA_V:
        (wheel,) = (w for w in root.glob(f"nvidia_cuda_runtime_cu1*-{version}.*") if w.is_dir())
        inc = wheel / "nvidia" / "cuda_runtime" / "include"
        (lib,) = (wheel / "nvidia" / "cuda_runtime" / "lib").glob("libcudart.so.1*")
        strings = set(
            subprocess.run(
                ["strings", "-n", "6", str(lib)], capture_output=True, text=True
            ).stdout.splitlines()
        )
        rt = dict(
            re.findall(
                r"^\s*(cudaError\w+)\s*=\s*(\d+)", (inc / "driver_types.h").read_text(), re.M
            )
        )
        drv = dict(
            re.findall(r"^\s*(CUDA_ERROR_\w+)\s*=\s*(\d+)", (inc / "cuda.h").read_text(), re.M)
        )
        for name, dname, code, message, _label in CUDA:
            if message not in strings:
                bad.append(f"{version}: {message!r} not in {lib.name}")
            if rt.get(name) != str(code):
                bad.append(f"{version}: {name} = {rt.get(name)}, not {code}")
            if dname and drv.get(dname) != str(code):
                bad.append(f"{version}: {dname} = {drv.get(dname)}, not {code}")
    pynvml = (root / "nvml" / "pynvml.py").read_text()
    for name, text, _label, _meaning in NVML_NAMES:
        const = "NVML_ERROR_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name.split("_", 1)[1]).upper()
        if not re.search(rf"{const}:\s*\"{re.escape(text)}\"", pynvml):
            bad.append(f"pynvml: {const} is not {text!r}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", type=Path, help="unpacked wheels to verify the table against")
    args = ap.parse_args()
    if args.check:
        bad = check(args.check)
        if bad:
            print("\n".join(bad), file=sys.stderr)
            return 1
    meta = {"generator": "tools/catalogue/curated_cuda.py", "curated": True}
    docs = "https://docs.nvidia.com/"
    print(
        write(
            "cuda",
            {
                "source": "cuda",
                "upstream": docs + "cuda/cuda-runtime-api/group__CUDART__TYPES.html",
                "versions": dict.fromkeys(CUDA_V, "nvidia-cuda-runtime wheel (libcudart.so)"),
                **meta,
            },
            cuda_entries(),
        )
    )
    print(
        write(
            "nvml",
            {
                "source": "nvml",
                "upstream": docs + "deploy/nvml-api/",
                "versions": {
                    "driver": "nvidia-smi as public reports quote it (R450-R580)",
                    "12.570": "nvidia-ml-py 12.570.86 (pynvml.py)",
                },
                **meta,
            },
            nvml_entries(),
        )
    )
    print(
        write(
            "cuda_libs",
            {
                "source": "cuda_libs",
                "upstream": docs + "cuda/cublas/index.html#cublasstatus-t",
                "versions": dict.fromkeys(
                    LIBS_V, "status enums (cublas_api.h, cudnn.h, cufft.h, cusolver_common.h)"
                ),
                **meta,
            },
            libs_entries(),
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
