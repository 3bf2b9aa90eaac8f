"""Huawei OBS (the object storage ModelArts jobs read and write) into catalogue/obs.json.

    python3 tools/catalogue/extract_obs.py --sdk huaweicloud-sdk-python-obs.git

The OBS Python SDK (esdk-obs-python, under MoXing and the ModelArts SDK) logs every failed
request as ``exceptional obs response:status:%d,reason:%s,code:%s,message:%s,requestId:%s``
(``src/obs/client.py``, read here at 3.22-3.25 to find it). One template per OBS server-side
error code, from OBS's published error code table ("OBS Server-Side Error Codes", curated:
the service is not open source): the code decides the cause (``NoSuchKey``: the path does not
exist; ``AccessDenied``, ``SignatureDoesNotMatch``: credentials or the IAM agency;
``SlowDown``, ``ServiceUnavailable``: the endpoint). MoXing itself is not published, so its
own exceptions stay with the hand-written patterns.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, git, write  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

SDK_TAGS = {"3.22": "v3.22.2", "3.23": "v3.23.12", "3.24": "v3.24.12", "3.25": "v3.25.8"}
CLIENT = "src/obs/client.py"
LOG_LINE = "exceptional obs response:status:%d,reason:%s,code:%s,message:%s,requestId:%s"
TABLE = "https://support.huaweicloud.com/intl/en-us/sdk-php-devg-obs/obs_28_1601.html"

_CLOCK = (
    "OBS refused the request's signature time: the node's clock is off by more than 15 "
    "minutes; sync it (chronyc tracking) and retry."
)
_ENDPOINT = (
    "OBS did not serve the request (busy, throttled or unreachable): retry with back-off, "
    "fewer parallel transfers, and check the endpoint the job uses is the region's."
)
# (code, HTTP status, label, remedy; "" = the label's own): codes of OBS's table a job meets
CODES: list[tuple[str, int, str, str]] = [
    ("NoSuchKey", 404, "input_path_not_found", ""),
    ("NoSuchBucket", 404, "input_path_not_found", ""),
    ("NoSuchUpload", 404, "input_path_not_found", ""),
    ("AccessDenied", 403, "storage_access_denied", ""),
    ("AccessForbidden", 403, "storage_access_denied", ""),
    ("AllAccessDisabled", 403, "storage_access_denied", ""),
    ("InvalidAccessKeyId", 403, "storage_access_denied", ""),
    ("SignatureDoesNotMatch", 403, "storage_access_denied", ""),
    ("AccountProblem", 403, "storage_access_denied", ""),
    ("FrozenUserId", 403, "storage_access_denied", ""),
    ("DeregisterUserId", 403, "storage_access_denied", ""),
    ("InArrearOrInsufficientBalance", 403, "storage_access_denied", ""),
    ("RequestTimeTooSkewed", 403, GENERIC, _CLOCK),
    ("InternalError", 500, "storage_connection_error", ""),
    ("ServiceUnavailable", 503, "storage_connection_error", ""),
    ("SlowDown", 503, "storage_connection_error", ""),
    ("RequestTimeout", 400, "storage_connection_error", ""),
    ("EntityTooLarge", 400, GENERIC, REMEDY["storage"]),
    ("BadDigest", 400, GENERIC, _ENDPOINT),
    ("InvalidBucketName", 400, "storage_path_invalid", ""),
    ("PermanentRedirect", 301, GENERIC, _ENDPOINT),
    ("TemporaryRedirect", 307, GENERIC, _ENDPOINT),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sdk", required=True, help="mirror of huaweicloud-sdk-python-obs")
    args = ap.parse_args()
    found: dict[str, str] = {}
    for series, tag in SDK_TAGS.items():
        src = git(args.sdk, "show", f"{tag}:{CLIENT}")
        at = src.find(LOG_LINE)
        if at >= 0:
            found[series] = f"{CLIENT}:{src.count(chr(10), 0, at) + 1}"
    if not found:
        raise SystemExit("the SDK no longer logs 'exceptional obs response': update LOG_LINE")
    newest = list(found)[-1]
    entries = []
    for code, status, label, remedy in CODES:
        template = LOG_LINE.replace("code:%s", f"code:{code}", 1)
        domain = "storage"
        origin = (
            f"huaweicloud/huaweicloud-sdk-python-obs {SDK_TAGS[newest]}: {found[newest]}; "
            f"{code} (HTTP {status}) in {TABLE}"
        )
        if label == GENERIC and not remedy:
            remedy = REMEDY[domain]
        e = entry(template, "error", origin, list(found), domain, label, remedy)
        entries.append(e | {"program": "obs", "code": code})
    meta = {
        "source": "obs",
        "upstream": "https://github.com/huaweicloud/huaweicloud-sdk-python-obs",
        "codes": TABLE,
        "versions": {k: SDK_TAGS[k] for k in found},
        "generator": "tools/catalogue/extract_obs.py",
    }
    print(len(entries), "templates;", write("obs", meta, entries))
    return 0


if __name__ == "__main__":
    assert all(re.fullmatch(r"[A-Za-z]+", c) for c, *_ in CODES)
    raise SystemExit(main())
