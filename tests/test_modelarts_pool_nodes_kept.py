"""A resource pool whose node listing fails for one poll (the API gateway's 429) keeps its
last listing: it read as a pool of no nodes, and at the next poll its Abnormal node
"entered Abnormal" again, a false page (the real SDK against the local API server)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from cockpit.modelarts.api import SdkModelArtsApi, SdkSettings
from cockpit.modelarts.source import ModelArtsSource
from cockpit.runtime import pipeline
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher
from tests.modelarts_server import AK, NOW, PROJECT_ID, SK, ModelArtsServer


def _nodes(snap, pool_id: str) -> list[tuple[str, str]]:
    (pool,) = [p for p in snap.pools if p.pool_id == pool_id]
    return [(n.name, n.phase) for n in pool.nodes]


def test_a_throttled_node_listing_keeps_the_last_one_and_pages_nothing(monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = ModelArtsServer().start()
    now = [NOW]
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(2, 5))
    )
    src = ModelArtsSource("prod", api, clock=lambda: now[0], pool_cache_s=0)
    watcher = Watcher(AlertConfig())

    async def poll():
        snap = await src.poll()
        a = pipeline.analyse(snap, now[0], {}, None, (None,))
        paged = watcher.observe(snap, a.findings, now[0], incidents=a.incidents)
        now[0] += timedelta(minutes=1)
        return snap, [x for x in paged if x.subject.kind == "pool"]

    try:
        first, _ = asyncio.run(poll())
        listed = _nodes(first, "pool-npu-b")
        assert ("npu-1", "Abnormal") in listed
        srv.inject(429, {"error_code": "APIGW.0308", "error_msg": "throttled"},
                   route=r"/pools/pool-npu-b/nodes")  # fmt: skip
        throttled, paged = asyncio.run(poll())
        assert any("pool-npu-b nodes" in w for w in throttled.warnings), throttled.warnings
        assert _nodes(throttled, "pool-npu-b") == listed and paged == []
        src._blocked_until = 0  # the throttle's back-off over
        after, paged = asyncio.run(poll())
        assert _nodes(after, "pool-npu-b") == listed
        assert paged == [], [a.title for a in paged]
    finally:
        srv.stop()
