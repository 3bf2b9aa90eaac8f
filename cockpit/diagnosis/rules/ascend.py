"""Huawei Ascend findings: CANN error codes, HCCL/HCCP plog lines, AI Core exceptions, and the
OBS/MoXing errors of ModelArts training code.

:func:`explain` reads one line (the code table is :mod:`cockpit.diagnosis.cann_codes`);
:func:`cann_logs` files a finding for every unclaimed log whose first red error is one of
these lines; the ModelArts rules use :func:`explain` for a training job's own logs.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from cockpit.diagnosis import cann_codes
from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.patterns import classify
from cockpit.diagnosis.rules.platform_logs import Explained, family_hit, file_finding, logs_to_read
from cockpit.i18n import N_, _
from cockpit.model import Finding, Snapshot

_OBS_NAMES = frozenset(
    {"py_obs_url_open", "mox_obs_error", "obs_not_found", "obs_denied", "py_not_a_directory"}
)
NAMES = frozenset(
    {name for name, *_ in cann_codes.pattern_specs(True) + cann_codes.pattern_specs(False)}
    | {"hccl_plog", "hccl_link_failed", "npu_aicore_exception", "pta_error", "gpu_oom"}
    | {"pta_hccl_error"}
    | _OBS_NAMES
)

_AICORE = re.compile(
    r"aicore (?:error )?exception|AICORE Kernel task happen error|ACL_ERROR_RT_AICORE_EXCEPTION"
)
_HCCL_PLOG = re.compile(r"^\[ERROR\] (HCCL|HCCP|ROCE)\(")
_MOX_REMEDY = N_(
    "The lines before it carry the OBS status: 404/NoSuchKey = the path does not exist (bucket "
    "and object names are case-sensitive), 403/AccessDenied = the ModelArts agency lacks OBS "
    "rights, a timeout = the network to OBS. Copy directories with mox.file.copy_parallel and "
    "single files with mox.file.copy."
)
_OBS = {
    "py_obs_url_open": (
        "storage_path_invalid",
        N_("the code opened an OBS URL as a local file"),
        N_("open(), numpy and PIL cannot read obs:// or s3:// URLs."),
        N_(
            "Copy the data first (mox.file.copy_parallel('obs://bucket/dir', '/cache/dir')) and "
            "open the local copy, or read the job's mounted input path instead of the URL."
        ),
    ),
    "mox_obs_error": (
        "input_path_not_found",
        N_("MoXing could not access OBS"),
        N_("MoXing gave up on an OBS request."),
        _MOX_REMEDY,
    ),
    "obs_not_found": (
        "input_path_not_found",
        N_("OBS object not found (404 NoSuchKey)"),
        N_("The code or MoXing asked OBS for an object that does not exist."),
        N_(
            "Check the OBS path spelling (bucket and object names are case-sensitive) and that the "
            "data was uploaded where the job points."
        ),
    ),
    "obs_denied": (
        "storage_access_denied",
        N_("object storage refused access (403)"),
        N_("OBS/S3 refused the request: the credentials or agency lack rights on the bucket."),
        N_(
            "Grant the job's agency/IAM user read (and list) rights on the bucket and check the "
            "bucket policy; with list rights a missing object reports 404 instead of 403."
        ),
    ),
    "py_not_a_directory": (
        "input_data_invalid",
        N_("a data path is a file where a directory is expected"),
        N_("The code lists or walks a path that is a file (Errno 20)."),
        N_(
            "Point the input at the directory (data_url ends at the folder), not at one file in it."
        ),
    ),
}


def explain(text: str, pattern: str = "") -> Explained | None:
    """What one Ascend/OBS line means (``pattern``: the catalogue pattern that matched it,
    when known); None when it is not such a line."""
    if not pattern:
        p = classify(text.encode("utf-8", "replace"))
        pattern = p.name if p is not None else ""
    if pattern in _OBS:
        label, phrase, what, remedy = _OBS[pattern]
        return Explained(label, "critical", _(phrase), _(what), _(remedy))
    v = cann_codes.best_code(text)
    if v is not None:
        return Explained(
            v.label,
            v.severity,
            f"{v.code} {v.title}",
            _("CANN {layer} error {code}: {title}.").format(
                layer=v.layer, code=v.code, title=v.title
            )
            + (
                " " + _("An internal error: the cause is usually printed before it.")
                if v.internal
                else ""
            ),
            v.remedy,
        )
    m = _HCCL_PLOG.search(text)
    if m is not None:
        code = "EI0006" if re.search(r"socket|[Ll]ink[Ee]stablish", text) else ""
        code = code or ("EI0002" if re.search(r"[Nn]otify|timeout", text) else "")
        v = cann_codes.lookup(code) if code else None
        return Explained(
            "nccl_communication_error",
            "critical",
            v.title if v else _("{what} communication error").format(what=m.group(1)),
            _("The {what} log (CANN plog) reports a collective-communication failure.").format(
                what=m.group(1)
            ),
            v.remedy if v else cann_codes.family_remedy("I"),
        )
    if _AICORE.search(text):
        return Explained(
            "application_error",
            "critical",
            _("AI Core exception in an NPU operator"),
            _("An operator faulted on the NPU's AI Core (out-of-range address, bad input)."),
            _(
                "Rerun with ASCEND_LAUNCH_BLOCKING=1 to name the operator, check its input shapes "
                "and dtypes, and keep CANN and torch_npu versions matched; if different programs "
                "fault on the same device, check it with npu-smi info and drain the node."
            ),
        )
    if pattern == "pta_hccl_error":  # torch_npu's "HCCL function error: …, error code is N"
        return Explained(
            "nccl_communication_error",
            "critical",
            _("{what} communication error").format(what="HCCL"),
            _("torch_npu reports that a CANN call failed."),
            cann_codes.family_remedy("I"),
        )
    if pattern == "pta_error":
        return Explained(
            "application_error",
            "critical",
            _("torch_npu call failed"),
            _("torch_npu reports that a CANN call failed."),
            _("The CANN code printed with it (EXXXXX) says why; read the plog (~/ascend/log)."),
        )
    return None


def cann_logs(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Unclaimed logs whose first red error is a CANN code, an HCCL plog line, an AI Core
    exception or an OBS/MoXing error: the code's meaning and remedy."""
    for lt, subject in logs_to_read(snap, ctx):
        h = family_hit(lt, ctx, NAMES)
        if h is None:
            continue
        e = explain(h.text, h.pattern)
        if e is None:
            continue
        if e.label == "application_error" and h.label not in ("application_error", ""):
            # a generic code cited under torch_npu's summary of a failed HCCL call
            # (logscan._messenger_cause): the summary names the kind, the code only the layer
            e = dataclasses.replace(e, label=h.label)
        if not h.strong:
            e = dataclasses.replace(e, severity="warning")
        yield file_finding(lt, subject, h, e)
