"""Wire JSON -> model: shapes from the v2 API as huaweicloudsdkmodelarts 3.1.219 returns them."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from modelarts_server import NOW, default_fixtures, scenario_wire  # noqa: E402

from cockpit.errors import ParseError  # noqa: E402
from cockpit.modelarts.parse import (  # noqa: E402
    parse_events,
    parse_memory_mib,
    parse_pool,
    parse_stages,
    parse_training_job,
)


def test_training_job_fields_and_units():
    w = scenario_wire("mount_denied")
    j = parse_training_job(w["job"], w["stages"], w["events"], w["preview"], now=NOW)
    assert (j.phase, j.secondary_phase, j.console_phase) == ("Pending", "Creating", "Initializing")
    assert j.create_time == datetime(2023, 11, 14, 5, 35, tzinfo=UTC)
    assert (j.flavor_cpus, j.flavor_gpus, j.flavor_memory_mib) == (8, 1, 64 * 1024)
    assert (j.pool_id, j.pool_public, j.node_count) == ("pool-gpu-a", False, 1)
    assert j.image.endswith("team/train:1.0") and j.boot_command == "python train.py"
    (m,) = j.mounts
    assert (m.kind, m.remote, m.direction) == ("obs", "obs://team-data/imagenet/", "input")
    assert j.tasks == ("worker-0",) and j.log_task == "worker-0"


def test_paths_keep_trailing_space_and_volumes():
    w = scenario_wire("bad_paths")
    j = parse_training_job(w["job"])
    kinds = {(m.kind, m.local) for m in j.mounts}
    assert ("obs", "/home/ma-user/data ") in kinds  # the space survives
    assert ("obs", "/data/ckpt") in kinds and ("evs", "/mnt/evs") in kinds


def test_public_pool_inferred_without_pool_id():
    assert parse_training_job(scenario_wire("queued_public")["job"]).pool_public is True


def test_exit_code_from_running_records_when_no_task_statuses():
    j = parse_training_job(scenario_wire("oom137")["job"])
    assert [(t.task, t.exit_code) for t in j.task_statuses] == [("worker-0", 137)]


def test_events_errors_first_then_oldest():
    ev = parse_events(scenario_wire("image_pull")["events"])
    assert [e.level for e in ev] == ["Warning", "Warning", "Warning", "Info"]
    assert "Failed to pull image" in ev[0].message and "BackOff" in ev[2].message
    assert ev[0].time.tzinfo is not None


def test_stages_latest_record_open_stage():
    st = parse_stages(
        {
            "running_records": [
                {
                    "record_order": 1,
                    "stages": [
                        {
                            "name": "scheduling",
                            "stage_order": 1,
                            "start_time": "2023-11-14T12:00:00+08:00",
                            "end_time": "2023-11-14T12:01:00+08:00",
                        }
                    ],
                },
                {
                    "record_order": 2,
                    "stages": [
                        {
                            "name": "preparing",
                            "stage_order": 2,
                            "start_time": "2023-11-14T12:05:00+08:00",
                            "end_time": "",
                            "sub_stages": [{"name": "image_pulling"}],
                        },
                        {
                            "name": "scheduling",
                            "stage_order": 1,
                            "start_time": "2023-11-14T12:02:00+08:00",
                            "end_time": "2023-11-14T12:05:00+08:00",
                        },
                    ],
                },
            ]
        }
    )
    assert [s.name for s in st] == ["scheduling", "preparing"]
    assert st[1].end_time is None and st[1].sub_stages == ("image_pulling",)
    assert st[0].start_time == datetime(2023, 11, 14, 4, 2, tzinfo=UTC)


def test_pool_and_nodes():
    fx = default_fixtures()
    p = parse_pool(fx["pools"][2], {"items": fx["nodes"]["pool-npu-b"]})
    assert (p.pool_id, p.name, p.public, p.phase, p.available, p.abnormal) == (
        "pool-npu-b",
        "npu-b",
        False,
        "Abnormal",
        1,
        1,
    )
    n = p.nodes[1]
    assert (n.name, n.phase, n.gpus, n.free_gpus, n.memory_mib, n.free_cpus) == (
        "npu-1",
        "Abnormal",
        8,
        0,
        512 * 1024,
        32.0,
    )


@pytest.mark.parametrize(
    ("q", "mib"),
    [("512Gi", 524288), ("64Gi", 65536), ("1024Mi", 1024), ("2048Ki", 2), (str(1024**3), 1024)],
)
def test_memory_quantities(q, mib):
    assert parse_memory_mib(q) == mib


@pytest.mark.parametrize(
    "bad",
    [
        [],  # a list where an object is expected
        {"metadata": {}},  # no id
        {"metadata": {"id": "x", "create_time": "yesterday"}},
        {"metadata": {"id": "x"}, "status": {"tasks": "worker-0"}},
        {"metadata": {"id": "x"}, "status": {"duration": "n/a"}},
        {
            "metadata": {"id": "x"},
            "spec": {"resource": {"flavor_detail": {"flavor_info": {"memory": {"size": "lots"}}}}},
        },
    ],
)
def test_malformed_job_raises_parse_error(bad):
    with pytest.raises(ParseError):
        parse_training_job(bad)


def test_malformed_events_pools_raise_parse_error():
    with pytest.raises(ParseError):
        parse_events({"events": [{"time": "soon", "level": "Info"}]})
    with pytest.raises(ParseError):
        parse_pool(
            {"metadata": {"name": "p"}},
            {"items": [{"metadata": {"name": "n"}, "status": {"resources": {"cpu": "many"}}}]},
        )
