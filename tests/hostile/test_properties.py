"""Property-based: every parser and the log scanner, fed arbitrary text or bytes (and
hostile near-misses of the real formats), returns or raises ParseError — nothing else."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cockpit.diagnosis import logscan
from cockpit.errors import ParseError
from cockpit.ingest import bundle
from cockpit.modelarts import parse as modelarts_parse
from cockpit.slurm import hostlist, storage
from cockpit.slurm import parse as slurm
from cockpit.slurm.commands import SEP, SQUEUE_FIELDS
from cockpit.slurm.parse_json import parse_sacct_json, parse_sinfo_json, parse_squeue_json
from cockpit.slurm.squeue import parse_squeue
from cockpit.text import clean

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# text that looks like the formats: their separators, keys and Slurm words mixed with noise
ALPHABET = st.sampled_from(
    [
        SEP,
        "|",
        "\n",
        "\r",
        " ",
        "=",
        "[",
        "]",
        ",",
        "-",
        ":",
        "_",
        "+",
        "%",
        "(",
        ")",
        "\x1b[31m",
        "\u2028",
        "\x85",
        "\x00",
        "é",
        "中",
        "\ufffd",
        "N/A",
        "None",
        "Unknown",
        "RUNNING",
        "PENDING",
        "16?",
        "0:0",
        "1-02:03:04",
        "4G",
        "2048M",
        "cn[01-04]",
        "NodeName=",
        "State=",
        "Reason=",
        "PartitionName=",
        "JobId=",
        "123",
        "7",
        "x",
    ]
)
SLURMISH = st.lists(ALPHABET, max_size=60).map("".join)
TEXT = st.one_of(st.text(max_size=300), SLURMISH)
BYTES = st.one_of(
    st.binary(max_size=400),
    SLURMISH.map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.text(max_size=200).map(lambda s: s.encode("gbk", "replace")),
)


def only_parse_error(fn, *args):
    try:
        return fn(*args)
    except ParseError:
        return None


@st.composite
def squeue_rows(draw):
    n = draw(st.integers(1, 4))
    rows = []
    for _ in range(n):
        cols = draw(
            st.lists(
                TEXT.map(lambda s: s.replace("\n", "")), min_size=0, max_size=len(SQUEUE_FIELDS) + 2
            )
        )
        rows.append(SEP.join(cols))
    return "\n".join(rows)


@FAST
@given(st.one_of(TEXT, squeue_rows()))
def test_slurm_delimited_parsers(text):
    for fn in (
        parse_squeue,
        slurm.parse_scontrol_nodes,
        slurm.parse_scontrol_partitions,
        slurm.parse_scontrol_job,
        slurm.parse_sacct,
    ):
        only_parse_error(fn, text)
    assert isinstance(slurm.parse_scontrol_records(text), list)


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True)
    | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "jobs",
                    "nodes",
                    "job_id",
                    "name",
                    "state",
                    "job_state",
                    "time",
                    "exit_code",
                    "steps",
                    "tres",
                    "number",
                    "set",
                    "infinite",
                    "items",
                    "metadata",
                    "status",
                    "spec",
                    "events",
                    "running_records",
                    "stages",
                    "resource",
                    "flavor_detail",
                    "nodes_info",
                    "x",
                ]
            ),
            kids,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@FAST
@given(
    st.one_of(
        TEXT,
        JSONISH.map(json.dumps),
        JSONISH.map(lambda v: json.dumps({"jobs": v})),
        JSONISH.map(lambda v: json.dumps({"nodes": v})),
    )
)
def test_slurm_json_parsers(text):
    for fn in (parse_squeue_json, parse_sinfo_json, parse_sacct_json):
        only_parse_error(fn, text)


@FAST
@given(TEXT)
def test_slurm_field_parsers(s):
    for fn in (
        slurm.parse_mem_mib,
        slurm.parse_duration_s,
        slurm.parse_time,
        slurm.parse_exit_code,
        slurm.parse_req_mem,
        slurm.split_node_state,
        slurm.split_reason,
    ):
        only_parse_error(fn, s)


@FAST
@given(
    st.one_of(
        TEXT,
        st.lists(
            st.sampled_from(["cn", "[", "]", "0", "1", "9", "-", ",", "a", "01-99", "x"]),
            max_size=30,
        ).map("".join),
    )
)
def test_hostlist_expand(expr):
    out = only_parse_error(hostlist.expand, expr)
    if out is not None:
        assert isinstance(out, tuple) and len(out) <= 1_000_000


@FAST
@given(JSONISH)
def test_modelarts_parsers(wire):
    for fn in (
        modelarts_parse.parse_training_job,
        modelarts_parse.parse_training_job_list,
        modelarts_parse.parse_pool,
        modelarts_parse.parse_pool_node,
        modelarts_parse.parse_events,
        modelarts_parse.parse_stages,
        modelarts_parse.parse_flavor_max_available,
        modelarts_parse.parse_time,
        modelarts_parse.parse_memory_mib,
        modelarts_parse.parse_cpu,
    ):
        only_parse_error(fn, wire)
    only_parse_error(
        modelarts_parse.parse_training_job,
        {"metadata": {"id": "x"}, "status": wire},
        wire,
        wire,
        wire,
    )


@FAST
@given(TEXT, st.one_of(st.none(), TEXT))
def test_df_parser(text, inodes):
    only_parse_error(storage.parse_df, text, (), inodes)


@FAST
@given(st.text(max_size=40), BYTES)
def test_bundle_recognisers(name, data):
    only_parse_error(bundle.sniff, name, data)
    text = data.decode("utf-8", "replace")
    for fn in (
        bundle.parse_fixed_table,
        bundle.parse_pipe_table,
        bundle.parse_squeue_any,
        bundle.parse_sinfo,
        bundle.parse_sinfo_r,
        bundle.parse_sacct_any,
    ):
        only_parse_error(fn, text)


@FAST
@given(BYTES, st.sampled_from(["app", "slurmctld", "slurmd", "modelarts"]))
def test_log_scanner(data, kind):
    try:
        hit = logscan.first_error(data, kind=kind)
        hits = list(logscan.iter_errors(data, kind=kind))
    except ParseError:
        return
    if hit is not None:
        assert 0 <= hit.offset <= len(data) and hits and hits[0].offset == hit.offset
    assert isinstance(logscan.decode_line(data), str)


@FAST
@given(st.one_of(st.text(max_size=500), st.binary(max_size=500)))
def test_clean_never_emits_control_characters(s):
    out = clean(s)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in out), repr(out)
    assert len(out) <= 4096
