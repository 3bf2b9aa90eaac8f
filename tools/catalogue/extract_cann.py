"""Ascend: CANN error codes, torch_npu and npu-smi/DCMI into cockpit/diagnosis/catalogue/.

    python3 tools/catalogue/extract_cann.py --runtime runtime.git --pytorch pytorch.git \
        --driver driver.git

Reads bare git mirrors (``fetch github:hicann/runtime``, ``github:Ascend/pytorch``,
``github:hicann/driver``) and writes three sources:

* ``cann.json``: the CANN error code reference as CANN itself ships it
  (``src/dfx/error_manager/error_code.json`` of hicann/runtime: every ``E?????`` code of GE,
  FE, AI CPU, the runtime ``EE``, ACL ``EH``, HCCL ``EI``, HCCP ``EJ``, profiling ``EK``,
  the driver ``EL``, operators ``EZ``…, with its title and message) at CANN 8.5, 9.0 and 9.1.
  A line holds the code, then (after a ``[PID: n]`` and a stamp) the message: the regex is
  the code followed by the message's words;
* ``torch_npu.json``: torch_npu's own ``ERRsscc <SUBMODULE> <what>`` codes (PTA, OPS, DIST,
  GRAPH, PROF x the ErrCode table), its ``NPU function error: ..., error code is N`` for every
  ACL/runtime return code of ``NPUErrorCodes.h`` (``507035``: vector core execution
  abnormal), and the device-fault words its watchdog throws (``UCE ERROR``, ``HBM MULTI BIT
  ECC ERROR``, ``FORCE STOP``…), across torch_npu 6.0-7.3 (PyTorch 2.1-2.7);
* ``npusmi.json``: npu-smi's ``dcmi module initialize failed. ret is N`` and ``Failed to
  execute npu-smi <cmd>. ret is N.`` for every DCMI return code (``-8020``: the device is held
  by another container) of ``dcmi_interface_api.h``, driver 8.5 and 9.0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, git, write  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

RUNTIME_TAGS = {"8.5": "v8.5.0", "9.0": "v9.0.1", "9.1": "v9.1.0"}
ERROR_CODE_JSON = "src/dfx/error_manager/error_code.json"
PTA_TAGS = {
    "6.0 (PyTorch 2.1)": "v6.0.0-pytorch2.1.0",
    "7.0 (PyTorch 2.5)": "v7.0.0-pytorch2.5.1",
    "7.1 (PyTorch 2.5)": "v7.1.0-pytorch2.5.1",
    "7.2 (PyTorch 2.6)": "v7.2.0-pytorch2.6.0",
    "7.3 (PyTorch 2.7)": "v7.3.0-pytorch2.7.1",
}
DRIVER_TAGS = {"8.5": "v8.5.0", "9.0": "v9.0.0-rc.1"}

# remedies written for the operator (the code reference's own suggestions stay in CANN's docs)
_NPU_OOM = (
    "NPU (HBM) memory ran out: a smaller batch with gradient accumulation, recomputation, or "
    "more NPUs; npu-smi info shows other processes holding device memory."
)
_BUSY = (
    "Another process or container holds the NPU: npu-smi info names it; stop the last run's "
    "leftover processes on that node and resubmit."
)
_ABSENT = (
    "The NPU is missing or unusable in this container: npu-smi info on the node, the "
    "/dev/davinciN devices mounted into the job (ASCEND_VISIBLE_DEVICES), the driver loaded."
)
_VERSION = (
    "The CANN toolkit, driver/firmware and torch_npu releases do not fit: use the versions "
    "the torch_npu release notes pair, the same on every node (npu-smi info, cat "
    "/usr/local/Ascend/ascend-toolkit/latest/version.cfg)."
)
_HCCL = (
    "The collective failed between NPUs: compare the earliest error in every rank's log (the "
    "first rank to fail is the cause); check the device network with hccn_tool -i <dev> "
    "-link -g / -net_health -g."
)
_RANKTABLE = (
    "The rank table or the HCCL settings do not match the devices: regenerate the rank table "
    "or let the platform generate it; every node must run the same script and image."
)
_PORT = (
    "A port HCCL needs is taken: another training process still runs on the node, or set "
    "HCCL_IF_BASE_PORT / HCCL_NPU_SOCKET_PORT_RANGE to a free range."
)
_INPUT = (
    "The model or script passed an operator something it does not accept (shape, dtype, "
    "format, an unsupported operator): the operator and argument are named in the message."
)
_ENV = "An environment variable or config value is invalid: the message names it and the value."
_DEVICE = (
    "The NPU reported a fault: npu-smi info -t health -i <id> and the device log (msnpureport); "
    "drain the node if the same device fails again."
)
_DCMI_INIT = (
    "npu-smi/DCMI cannot reach the NPU from here: another container holds it, it is not "
    "mounted into this container (--device /dev/davinciN and davinci_manager, or --privileged), "
    "this user may not open /dev/davinci* (root or the HwHiAiUser group), or the driver does "
    "not match the kernel the node booted (reinstall it after a kernel upgrade)."
)
_INNER = (
    "CANN reports an internal error: the lines before it (the first E-code, the operator "
    "name) say where; collect the plog (~/ascend/log) for the vendor if nothing does."
)

# (regex over "CODE title message", domain, label, remedy): first match wins
RULES: tuple[tuple[str, str, str, str], ...] = (
    (
        r"Insufficient_Device_Memory|NPU memory|Memory_Allocation_Failure",
        "accelerator",
        "gpu_out_of_memory",
        "",
    ),
    (r"Resource_Busy|last training process is running", "accelerator", "accelerator_busy", ""),
    (r"Device_Absent|Invalid_Device_ID|No_Permission", "accelerator", "gpu_not_available", ""),
    (
        r"Incorrect_Driver_Version|Incorrect_HCCL_Version|Package_Error",
        "software",
        "library_version_mismatch",
        "",
    ),
    (r"Insufficient disk space", "storage", "disk_full", ""),
    (r"Insufficient_Host_Memory|host memory", "memory", GENERIC, REMEDY["memory"]),
    (r"(?i)ranktable|rank table|rootInfo", "network", GENERIC, _RANKTABLE),
    (r"Bind_IP_Port|listening", "network", GENERIC, _PORT),
    (r"^E[IJ]", "network", GENERIC, _HCCL),
    (r"Environment_Variable|Config_Error|environment variable", "software", GENERIC, _ENV),
    (
        r"Invalid_Argument|Invalid_Input|Invalid_Attr|Unsupported_Operator|Not_Supported|"
        r"Parameter_Error|Invalid_Param",
        "application",
        GENERIC,
        _INPUT,
    ),
    (
        r"^EK",
        "software",
        GENERIC,
        "Profiling failed: the job may still run; rerun without "
        "profiling, or check the profiling output path and its disk.",
    ),
    (r"Inner_Error|Inner Error|internal error|E\w9999", "accelerator", GENERIC, _INNER),
    (r"^E", "accelerator", GENERIC, _DEVICE),
)
_RULES = tuple((re.compile(rx), d, lab, rem) for rx, d, lab, rem in RULES)


def map_code(code: str, title: str, message: str) -> tuple[str, str, str]:
    text = f"{code} {title} {message}"
    for rx, domain, label, remedy in _RULES:
        if rx.search(text):
            return domain, label, remedy
    return "accelerator", GENERIC, _DEVICE


def cann_entries(mirror: str) -> list[dict]:
    found: dict[str, dict] = {}
    for series, tag in RUNTIME_TAGS.items():
        doc = json.loads(git(mirror, "show", f"{tag}:{ERROR_CODE_JSON}"))
        for e in doc["error_info_list"]:
            code, title = e["ErrCode"].strip(), e.get("errTitle", "").strip()
            if not re.fullmatch(r"E[0-9A-Z][0-9]{4}", code):
                continue  # W* codes are warnings
            first = next(
                (ln.strip() for ln in e["ErrMessage"].splitlines() if re.search("[A-Za-z]", ln)),
                "%s",
            )
            key = f"{code} {first}"
            if key in found:
                found[key]["versions"].append(series)
                continue
            domain, label, remedy = map_code(code, title, first)
            if label == GENERIC:
                # the engine reads a code that names no cause as the application's error
                # (cockpit/diagnosis/cann_codes.py, weak: a named cause elsewhere wins); the
                # catalogue says the same, its remedy says which layer raised it
                domain, label = "application", "application_error"
            got = entry(
                first,
                "error",
                f"hicann/runtime {tag}: {ERROR_CODE_JSON} {code} ({title})",
                [series],
                domain,
                label,
                remedy,
                prefix=rf"{code}[^\n]*?" if re.search("[A-Za-z]", first) else code,
            )
            found[key] = got | {"program": "cann", "code": code, "title": title}
    return list(found.values())


# torch_npu's ErrCode -> (domain, remedy) for its ERRsscc lines: a wrapper around the CANN
# error printed with it, so domain-only (the E-code or cause beside it names the cause)
_PTA_CODE = {
    "MEMORY": ("accelerator", _NPU_OOM),
    "ACL": ("accelerator", _INNER),
    "GE": ("accelerator", _INNER),
    "HCCL": ("network", _HCCL),
    "TIMEOUT": ("network", _HCCL),
    "SYSCALL": ("node", REMEDY["node"]),
    "PERMISSION": ("storage", REMEDY["storage"]),
}
# the fault words torch_npu's watchdog throws (NPUException.cpp): device faults are hardware
_FAULTS = {
    "UCE ERROR": ("accelerator", "gpu_hardware_error", ""),
    "HBM MULTI BIT ECC ERROR": ("accelerator", "gpu_hardware_error", ""),
    "SUSPECT MEM ERROR": ("accelerator", "gpu_hardware_error", ""),
    "HCCS LINK ERROR": ("network", "nccl_communication_error", ""),
    "UB LINK ERROR": ("network", "nccl_communication_error", ""),
    "HCCL OP RETRY FAILED": ("network", "nccl_communication_error", ""),
    "SUSPECT REMOTE ERROR": ("network", GENERIC, _HCCL),
    "FORCE STOP": (
        "accelerator",
        GENERIC,
        "The job was stopped on purpose (a fault elsewhere "
        "made the framework stop every rank): the first fault in any rank's log is "
        "the cause.",
    ),
}
# ACL/runtime return codes (NPUErrorCodes.h) -> label, by the first line of their description
_ACL_RULES = (
    (
        r"(?i)memory on the device is exhausted|out of memory|insufficient (?:device )?memory",
        "accelerator",
        "gpu_out_of_memory",
        "",
    ),
    (r"(?i)ecc|hbm|uce|memory (?:hardware|error)", "accelerator", "gpu_hardware_error", ""),
    (r"(?i)link|hccl|communication|socket|network|notify|remote", "network", GENERIC, _HCCL),
    (r"(?i)timed? ?out|timeout", "accelerator", GENERIC, _INNER),
    (
        r"(?i)parameter|invalid|not supported|unsupported|uninitiali[sz]ed|repeated",
        "application",
        GENERIC,
        _INPUT,
    ),
    (r"(?i)file|path", "storage", GENERIC, REMEDY["storage"]),
)


def torch_npu_entries(mirror: str) -> list[dict]:
    found: dict[str, dict] = {}

    def add(template, origin, series, domain, label, remedy, prefix="", **extra):
        e = found.get(template)
        if e is not None:
            if series not in e["versions"]:
                e["versions"].append(series)
            e["origin"] = origin
            return
        got = entry(template, "error", origin, [series], domain, label, remedy, prefix=prefix)
        found[template] = got | {"program": "torch_npu", **extra}

    for series, tag in PTA_TAGS.items():
        exc = "torch_npu/csrc/core/npu/NPUException.cpp"
        src = git(mirror, "show", f"{tag}:{exc}")
        subs = dict(re.findall(r"\{SubModule::(\w+), \"(\w+)\"\}", src))
        codes = dict(re.findall(r"\{ErrCode::(\w+), \"([^\"]+)\"\}", src))
        hdr = git(mirror, "show", f"{tag}:torch_npu/csrc/core/npu/NPUException.h")
        sub_no = dict(re.findall(r"(\w+) = (\d+)", hdr.split("enum class SubModule", 1)[1][:200]))
        code_no = dict(re.findall(r"(\w+) = (\d+)", hdr.split("enum class ErrCode", 1)[1][:600]))
        for sub, sub_name in subs.items():
            for code, what in codes.items():
                if code == "SUC" or sub not in sub_no or code not in code_no:
                    continue
                number = f"ERR{int(sub_no[sub]):02d}{int(code_no[code]):03d}"
                # the engine reads every ERRsscc line as torch_npu's call failing in the
                # application (rules/ascend.py, weak): domain application, the remedy by code
                remedy = _PTA_CODE.get(code, ("", REMEDY["application"]))[1]
                if sub == "DIST" and code not in _PTA_CODE:
                    remedy = _HCCL
                domain = "application"
                add(
                    f"{number} {sub_name} {what}",
                    f"Ascend/pytorch {tag}: {exc}",
                    series,
                    domain,
                    "application_error",
                    remedy,
                )
        for words in re.findall(
            r"return \"([A-Z][A-Z ]+ERROR\.?|FORCE STOP|HCCL OP RETRY "
            r"FAILED)\"",
            src,
        ):
            words = words.rstrip(".")
            if words in _FAULTS:
                domain, label, remedy = _FAULTS[words]
                add(words, f"Ascend/pytorch {tag}: {exc}", series, domain, label, remedy)
        for words in ("HCCS LINK ERROR", "UB LINK ERROR"):
            if f'"{words}"' in src:
                add(words, f"Ascend/pytorch {tag}: {exc}", series, *_FAULTS[words])
        codes_h = "torch_npu/csrc/core/npu/NPUErrorCodes.h"
        table = git(mirror, "show", f"{tag}:{codes_h}")
        for number, desc in re.findall(r"\{(\d{6}),\s*\"([^\"\\]*)", table):
            desc = desc.strip()
            domain, label, remedy = "accelerator", GENERIC, _DEVICE
            for rx, d, lab, rem in _ACL_RULES:
                if re.search(rx, desc):
                    domain, label, remedy = d, lab, rem
                    break
            add(
                f"NPU function error: %s, error code is {number}",
                f"Ascend/pytorch {tag}: {codes_h} {number}",
                series,
                domain,
                label,
                remedy,
                meaning=desc,
            )
        alloc = "torch_npu/csrc/core/npu/NPUCachingAllocator.cpp"
        if "NPU out of memory. Tried to allocate" in git(mirror, "show", f"{tag}:{alloc}"):
            add(
                "NPU out of memory. Tried to allocate %s",
                f"Ascend/pytorch {tag}: {alloc}",
                series,
                "accelerator",
                "gpu_out_of_memory",
                "",
            )
    return list(found.values())


def npusmi_entries(mirror: str) -> list[dict]:
    found: dict[str, dict] = {}
    api = "src/custom/include/dcmi_interface_api.h"
    smi = "src/custom/dev_prod/user/npucli/src/npu_smi.c"
    # npu-smi's own source is published only after 9.0: its print shapes come from the newest
    # commit, the return codes from each release's header
    head = git(mirror, "rev-parse", "HEAD").strip()
    main_c = git(mirror, "show", f"{head}:{smi}")
    for series, tag in DRIVER_TAGS.items():
        hdr = git(mirror, "show", f"{tag}:{api}")
        base = int(re.search(r"#define DCMI_ERROR_CODE_BASE \((-?\d+)\)", hdr).group(1))
        shapes = [
            s
            for s in (
                "dcmi module initialize failed. ret is %d",
                "Failed to execute npu-smi %s. ret is %d.",
            )
            if s in main_c
        ]
        for name, off in re.findall(
            r"#define (DCMI_ERR_CODE_\w+)\s+\(DCMI_ERROR_CODE_BASE - "
            r"(\d+)\)",
            hdr,
        ):
            value = base - int(off)
            what = name.removeprefix("DCMI_ERR_CODE_")
            if what == "RESOURCE_OCCUPIED":
                domain, label, remedy = "accelerator", "accelerator_busy", ""
            elif what in ("INVALID_DEVICE_ID", "DEVICE_NOT_EXIST", "NOT_SUPPORT_IN_CONTAINER"):
                domain, label, remedy = "accelerator", "gpu_not_available", ""
            elif what in ("OPER_NOT_PERMITTED",):
                domain, label, remedy = (
                    "accelerator",
                    GENERIC,
                    (
                        "npu-smi needs root (or the HwHiAiUser group) on the node: run it as root "
                        "or through the platform's device plugin."
                    ),
                )
            else:
                domain, label, remedy = "accelerator", GENERIC, _DEVICE
            for shape in shapes:
                template = shape.replace("%d", str(value))
                if what == "INNER_ERR" and shape.startswith("dcmi module initialize"):
                    # DCMI cannot start at all (-8005): the NPU is not reachable from here, a
                    # device question, not a fault inside one (batch 27, case 325)
                    domain, label, remedy = "accelerator", "gpu_not_available", _DCMI_INIT
                elif what == "INNER_ERR":
                    domain, label, remedy = "accelerator", GENERIC, _DEVICE
                e = found.get(template)
                if e is not None:
                    e["versions"].append(series)
                    continue
                got = entry(
                    template,
                    "error",
                    f"hicann/driver {head[:12]}: {smi}; {tag}: {api} {name}",
                    [series],
                    domain,
                    label,
                    remedy,
                )
                found[template] = got | {"program": "npusmi", "code": str(value), "title": name}
    return list(found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", required=True, help="bare git mirror of github.com/hicann/runtime")
    ap.add_argument("--pytorch", required=True, help="bare git mirror of github.com/Ascend/pytorch")
    ap.add_argument("--driver", required=True, help="bare git mirror of github.com/hicann/driver")
    args = ap.parse_args()
    gen = "tools/catalogue/extract_cann.py"
    for source, upstream, versions, entries in (
        ("cann", "https://github.com/hicann/runtime", RUNTIME_TAGS, cann_entries(args.runtime)),
        (
            "torch_npu",
            "https://github.com/Ascend/pytorch",
            PTA_TAGS,
            torch_npu_entries(args.pytorch),
        ),
        ("npusmi", "https://github.com/hicann/driver", DRIVER_TAGS, npusmi_entries(args.driver)),
    ):
        meta = {"source": source, "upstream": upstream, "versions": versions, "generator": gen}
        print(len(entries), "templates;", write(source, meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
