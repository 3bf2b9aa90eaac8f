"""Guarded actions on the real Slurm lab: the node really drains with the operator's reason,
comes back on resume, and a refused action returns Slurm's own answer."""

from __future__ import annotations

import pytest

from cockpit.actions import CATALOGUE, build
from cockpit.model import Subject

pytestmark = pytest.mark.lab

NODE = "c3"  # batch + the down 'maint' partition: the other lab tests submit to debug (c1-c2)


def kind(verb: str):
    return next(k for k in CATALOGUE if k.verb == verb)


def sinfo(lab_env, fmt: str) -> str:
    return lab_env.run("sinfo", "-h", "-N", "-n", NODE, "-o", fmt).stdout.strip().splitlines()[0]


async def test_drain_and_resume_a_node_through_each_transport(lab_env, lab_source):
    subject = Subject("node", lab_source.name, NODE)
    reason = f"cockpit test: fan FAN2 failed ({lab_source.transport.name})"
    try:
        res = await lab_source.run_action(build(kind("drain"), subject, reason))
        assert res.ok and res.exit_status == 0, res.output
        assert sinfo(lab_env, "%E") == reason
        assert sinfo(lab_env, "%t").startswith("drain")
        snap = await lab_source.poll()
        node = next(n for n in snap.nodes if n.name == NODE)
        assert "DRAIN" in node.flags and node.reason == reason
    finally:
        res = await lab_source.run_action(build(kind("resume"), subject))
    assert res.ok, res.output
    assert not sinfo(lab_env, "%t").startswith("drain")


async def test_a_refused_action_returns_slurms_answer(lab_env, lab_source):
    res = await lab_source.run_action(
        build(kind("hold"), Subject("job", lab_source.name, "999999"))
    )
    assert not res.ok and res.exit_status not in (0, None)
    assert "Invalid job id" in res.output


async def test_a_hold_slurm_calls_failed_still_shows_what_slurm_did(lab_env, lab_source):
    # a job that can never run (64 CPUs on 2-CPU nodes, Reason=PartitionConfig): Slurm 22.05's
    # `scontrol hold` holds it and still exits 1; whatever the exit, the poll the dialog asks
    # for has the truth
    jid = lab_env.sbatch("-p", "debug", "-c", "64", "-J", "cockpit-hold-pc", "--wrap", "true")
    try:
        res = await lab_source.run_action(build(kind("hold"), Subject("job", lab_source.name, jid)))
        assert res.exit_status is not None
        snap = await lab_source.poll()
        job = next(j for j in snap.jobs if j.job_id == jid)
        assert (job.state, job.reason) == tuple(lab_env.job_state(jid))
    finally:
        lab_env.scancel(jid)
