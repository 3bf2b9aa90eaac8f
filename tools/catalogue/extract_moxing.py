"""MoXing (ModelArts' file and OBS library) into cockpit/diagnosis/catalogue/moxing.json.

    python3 tools/catalogue/extract_moxing.py --docs modelarts-docs.git

MoXing is not published as source, so its messages are curated from what ModelArts' own
documentation quotes (the troubleshooting pages of github.com/opentelekomcloud-docs/modelarts,
``fetch github:opentelekomcloud-docs/modelarts``) and from MoXing's API reference (the
``moxing.framework.file`` exceptions, huaweicloud/ModelArts-Lab ``docs/moxing_api_doc``). The
script checks that each quoted message is still on its page at the mirror's HEAD and records
the page and commit as its origin.

When an OBS request fails MoXing logs ``ERROR:root:Failed to call:`` with the SDK call, then a
block of the OBS response (``stat:404`` / ``errorCode:NoSuchKey`` / ``errorMessage:...`` /
``reason:...`` / ``request-id:...``). The ``errorCode:`` line carries the OBS server-side code:
one template per code of OBS's table (the same codes and causes as ``extract_obs.py``), so
every code MoXing can print is known, not only those a page quotes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, git, write  # noqa: E402
from extract_obs import CODES, TABLE  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

TROUBLE = "umn/source/troubleshooting/"
_COPY = TROUBLE + "moxing/error_occurs_when_moxing_is_used_to_copy_data.rst"
_NOKEY = (
    TROUBLE + "training_jobs/obs_operation_issues/"
    "error_message_errormessagethe_specified_key_does_not_exist_displayed_in_logs.rst"
)
_403 = (
    TROUBLE
    + "general_issues/why_error_403_forbidden_is_displayed_when_i_perform_operations_on_obs.rst"
)
_ENDPOINT = (
    TROUBLE + "training_jobs/obs_operation_issues/"
    "error_unable_to_connect_to_endpoint_error_occurs_when_a_model_is_saved.rst"
)
_5GB = (
    TROUBLE + "training_jobs/obs_operation_issues/"
    "tensorflow_stops_writing_tensorboard_to_obs_when_the_size_of_written_data_reaches_5_gb.rst"
)
API = "huaweicloud/ModelArts-Lab docs/moxing_api_doc/MoXing_API_File_apidoc.md"
LAB_879 = "https://github.com/huaweicloud/ModelArts-Lab/issues/879"

_RETRY = (
    "MoXing is retrying OBS requests that fail (throttling, a slow or unreachable endpoint): "
    "fewer parallel copies (file_io._NUMBER_OF_PROCESSES=1), mox.file.set_auth(is_secure="
    "False), and an OBS bucket in the job's own region."
)
_ACCESS = (
    "An OBS request failed: the ``stat:``/``errorCode:`` lines after it say why (404 NoSuchKey: "
    "the path does not exist; 403: the job's agency or AK/SK lacks the bucket's permission)."
)
# (template, level, page or reference, the words the page quotes, domain, label, remedy)
QUOTED: list[tuple[str, str, str, str, str, str, str]] = [
    ("Failed to call:", "error", _COPY, "ERROR:root:Failed to call:", "storage", GENERIC, _ACCESS),
    ("No files to copy", "error", _COPY, "No files to copy", "storage", "input_path_not_found", ""),
    (
        "Retry=%d,Wait=%s, Timestamp = %s",
        "warning",
        _COPY,
        "WARNING:root:Retry=9,Wait=0.1, Timestamp = ",
        "storage",
        "storage_connection_error",
        _RETRY,
    ),
    (
        "errorMessage:The specified key does not exist.",
        "error",
        _NOKEY,
        "errorMessage:The specified key does not exist.",
        "storage",
        "input_path_not_found",
        "",
    ),
    (
        "Error: stat:403",
        "error",
        _403,
        'Message "Error: stat:403" is displayed',
        "storage",
        "storage_access_denied",
        "",
    ),
    (
        ": Unable to connect to endpoint",
        "error",
        _ENDPOINT,
        ": Unable to connect to endpoint",
        "storage",
        "storage_connection_error",
        "",
    ),
    (
        "Your proposed upload exceeds the maximum allowed object size.",
        "error",
        _5GB,
        "Your proposed upload exceeds the maximum allowed object size.",
        "storage",
        GENERIC,
        "OBS takes at most 5 GB in one upload: write large files in parts (MoXing's "
        "copy of a local file, or a multipart upload), or keep event files under 5 GB.",
    ),
]
# moxing.framework.file's exceptions (the API reference; MoxFileRespException's message as a
# traceback prints it in ModelArts-Lab#879)
EXCEPTIONS: list[tuple[str, str, str, str]] = [
    ("MoxFileNotExistsException: %s", API, "input_path_not_found", ""),
    ("MoxFileRespException: Error occurs when accessing to OBS.", LAB_879, GENERIC, _ACCESS),
    ("MoxFileReadException: %s", API, "storage_connection_error", ""),
    (
        "MoxFileNameDuplicateException: %s",
        API,
        GENERIC,
        "A directory and a file of the same name exist under the OBS prefix (OBS allows it, a "
        "local disk does not): rename one in the bucket before copying.",
    ),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", required=True, help="mirror of opentelekomcloud-docs/modelarts")
    args = ap.parse_args()
    head = git(args.docs, "rev-parse", "HEAD").strip()
    day = git(args.docs, "log", "-1", "--format=%cs", "HEAD").strip()[:7]
    version = f"docs-{day}"
    entries = []
    for template, level, page, quoted, domain, label, remedy in QUOTED:
        if quoted not in git(args.docs, "show", f"HEAD:{page}"):
            raise SystemExit(f"{page} no longer quotes {quoted!r}: update QUOTED")
        origin = f"opentelekomcloud-docs/modelarts {head[:12]}: {page}"
        # "Failed to call:" alone is anyone's: MoXing's is the root logger's ERROR line
        prefix = "ERROR:root:" if quoted.startswith("ERROR:root:" + template) else ""
        e = entry(template, level, origin, [version], domain, label, remedy, prefix=prefix)
        entries.append(e | {"program": "moxing"})
    for template, origin, label, remedy in EXCEPTIONS:
        domain = "storage"
        e = entry(template, "error", origin, [version], domain, label, remedy)
        entries.append(e | {"program": "moxing"})
    # the errorCode: line of MoXing's OBS error block, for every code of OBS's table
    block = git(args.docs, "show", f"HEAD:{_NOKEY}")
    if "errorCode:NoSuchKey" not in block:
        raise SystemExit("the page no longer shows MoXing's errorCode: line: update _NOKEY")
    for code, status, label, remedy in CODES:
        if label == GENERIC and not remedy:
            remedy = REMEDY["storage"]
        origin = (
            f"opentelekomcloud-docs/modelarts {head[:12]}: {_NOKEY} (the block's form); "
            f"{code} (HTTP {status}) in {TABLE}"
        )
        e = entry(f"errorCode:{code}", "error", origin, [version], "storage", label, remedy)
        entries.append(e | {"program": "moxing", "code": code})
    meta = {
        "source": "moxing",
        "upstream": "https://github.com/opentelekomcloud-docs/modelarts",
        "curated": True,
        "versions": {version: head},
        "generator": "tools/catalogue/extract_moxing.py",
    }
    print(len(entries), "templates;", write("moxing", meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
