"""Producers added to the catalogue for issue #30's last round, each tested in lines from a
second public source than the bundle that found its gap: HCCL's link table, munged refusing an
insecure path, Kubernetes' event and status reasons, MoXing's OBS error block.

Lines are quoted from the public reports named beside them (host names and ids as there).
"""

from __future__ import annotations

import pytest

from cockpit.diagnosis.catalogue import match
from cockpit.diagnosis.domains import domain_of_line
from cockpit.diagnosis.logscan import first_error

# ------------------------------------------------------------------------ HCCL's plog and table

# vllm-project/vllm-ascend#1955: the port is taken, then the link table is printed
_LISTEN_FAIL = (
    "[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288]"
    "[HcclSocket][Listen] socket type[1], listen on ip[192.168.20.160] and specific port[16666] "
    "fail. Please check the port status and whether the port is been using by other process."
)
_VLLM_1955 = "\n".join(
    [
        _LISTEN_FAIL,
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.466 [hccl_socket_manager.cc:54] "
        "[2717288][ServerInit]call trace: hcclRet -> 19",
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] "
        "[2734049][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] "
        "timeout[120]",
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.280 [hccl_socket_manager.cc:591] "
        "[2734049]   _________________________LINK_ERROR_INFO___________________________",
    ]
)
# the MindSpore distributed-training guide's plog (CANN 5, exchanger_network.cc)
_MINDSPORE_DOC = "\n".join(
    [
        "[ERROR] HCCL(130250,python):2021-10-14-00:50:50.787.375 [exchanger_network.cc:232]"
        "[130250][138166][Wait][AllClientSocketEstab]errNo[0x000000000500000b] client : "
        "device[1] rank[1] get socket timeout, total[4] remain[3]",
        "[ERROR] HCCL(130250,python):2021-10-14-00:50:50.787.509 [exchanger_network.cc:760]"
        "[130250][138166]   _____________________________________________________",
    ]
)


def _table(status: str, role: str) -> str:
    """LINK_ERROR_INFO as hcomm prints it (hccl_socket_manager.cc), one failed row."""
    head = (
        "[ERROR] HCCL(4242,python3):2026-12-04-10:00:00.123.456 [hccl_socket_manager.cc:{}] [4250]"
    )
    rows = [
        (623, "   _________________________LINK_ERROR_INFO___________________________"),
        (624, "   |  comm error, device[3] "),
        (
            625,
            "   |  dest_ip(user_rank)  |   dest_port   |  src_ip(user_rank)   |   src_port   |"
            "   MyRole   |   Status   |    TlsStatus   |",
        ),
        (627, "   |----------------------|---------------|----------------------|--------------|"),
        (
            582,
            f"   |  192.168.1.8(9)   |  60000  |   192.168.1.7(1)   |  60001  | {role} | "
            f"{status} |   ENABLE  | LinkInfo",
        ),
    ]
    return "\n".join(head.format(n) + text for n, text in rows)


def _first(text: str):
    hit = first_error(text.encode() + b"\n")
    assert hit is not None
    return hit


def test_hccl_message_before_the_link_table_is_the_first_red_error():
    hit = _first(_VLLM_1955)
    assert hit.text == _LISTEN_FAIL and hit.label == "nccl_communication_error"
    assert _first(_MINDSPORE_DOC).text.endswith("get socket timeout, total[4] remain[3]")


@pytest.mark.parametrize("status", ["time out", "connect failed", "no connect"])
@pytest.mark.parametrize("role", [" server ", " client "])
def test_hccl_link_table_names_the_failed_link_not_its_border(status, role):
    hit = _first(_table(status, role))
    assert hit.text.rstrip().endswith("LinkInfo") and f"| {status} |" in hit.text
    assert hit.label == "nccl_communication_error"


def test_hccl_transport_timeout_is_known_without_its_plog_prefix():
    # hcomm's wording (CANN 8.5+); CANN 8.0's "timeout[120]" (vllm-ascend#1955) predates it and
    # is the plog pattern's alone
    line = "[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120 s]"
    t = match(line)
    assert t is not None and t.source == "hccl" and t.label == "nccl_communication_error"
    assert domain_of_line(line) == "network"


# ------------------------------------------------------------------------ munged refusing a path

# dun/munge#146 (the bundle 252), #30 and #7: munged's own words as systemd and a shell show them
MUNGED = [
    "Sep 17 09:50:19 master munged[45712]: munged: Error: Logfile is insecure: world-writable "
    'permissions without sticky bit set on "/"',
    'munged: Error: Logfile is insecure: invalid ownership of "/"',
    'munged: Error: Logfile is insecure: invalid ownership of "/var/log/munge"',
]


@pytest.mark.parametrize("line", MUNGED)
def test_munged_refusing_an_insecure_path_is_an_authentication_failure(line):
    hit = _first(line)
    assert hit.text == line and hit.label == "auth_failed"
    assert domain_of_line(line) == "auth"


# ------------------------------------------------------------------------ Kubernetes reasons


@pytest.mark.parametrize(
    ("line", "label"),
    [
        ("train-worker-0   0/1     Evicted   0          5m", "pod_evicted"),
        ("    Last State:     Terminated\n      Reason:       OOMKilled", "oom_killed"),
        ("  Warning  FailedAttachVolume  2m  attachdetach-controller  AttachVolume", None),
    ],
)
def test_kubernetes_reasons_in_get_pods_and_describe(line, label):
    hit = _first(line)
    assert hit.label == label or (label is None and domain_of_line(hit.text) == "storage")


def test_lustre_eviction_is_not_a_pod_eviction():
    """A status reason is a whole word in its column: Lustre's 'Evicted from' stays storage."""
    line = (
        "[183424.512345] LustreError: 4242:0:(client.c:1234:ptlrpc_check_set()) Evicted from "
        "MGS (at 10.0.0.1@o2ib) after server handle changed from 0x1f to 0x2f"
    )
    assert domain_of_line(line) == "storage"


# ------------------------------------------------------------------------ MoXing's OBS block


def test_moxing_obs_error_block_names_the_code():
    # opentelekomcloud-docs/modelarts: "Error Message ... The specified key does not exist"
    block = (
        "ERROR:root:\nstat:404\nerrorCode:NoSuchKey\nerrorMessage:The specified key does not exist."
    )
    hit = _first(block)  # the block's first line that names it: the status or the code
    assert hit.label == "input_path_not_found" and hit.line in (2, 3)
    denied = "ERROR:root:\n    stat:403\n    errorCode:AccessDenied\n    errorMessage:Access Denied"
    assert _first(denied).label == "storage_access_denied"
