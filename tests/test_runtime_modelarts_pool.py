"""ModelArts runs its blocking SDK on its own small pool, with a deadline per call, and holds
log previews only for listed jobs (bounded): a slow or big project cannot starve or bloat the
rest of the cockpit."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from modelarts_server import AK, NOW, PROJECT_ID, SK, ModelArtsServer  # noqa: E402

from cockpit.modelarts.api import ModelArtsApiError, SdkModelArtsApi, SdkSettings  # noqa: E402
from cockpit.modelarts.source import ModelArtsSource, PreviewCache, log_path  # noqa: E402


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = ModelArtsServer().start()
    yield srv
    srv.stop()


def make_source(srv: ModelArtsServer) -> ModelArtsSource:
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(1, 1))
    )
    return ModelArtsSource("prod", api, clock=lambda: NOW, pool_cache_s=0)


def _sdk_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("modelarts-prod")]


async def test_sdk_calls_run_on_the_sources_own_pool_closed_on_close(server):
    src = make_source(server)
    seen: set[str] = set()
    real = src.api.list_training_jobs

    def spy(*args):
        seen.add(threading.current_thread().name)
        return real(*args)

    src.api.list_training_jobs = spy
    snap = await src.poll()
    assert snap.ok and seen and all(n.startswith("modelarts-prod") for n in seen)
    assert 0 < len(_sdk_threads()) <= 4
    await src.close()
    for t in _sdk_threads():
        t.join(timeout=5)
    assert _sdk_threads() == []


async def test_a_hung_sdk_call_times_out_and_leaves_the_default_pool_free():
    class Hung:
        blocking = True
        release = threading.Event()

        def list_training_jobs(self, *args):
            self.release.wait(10)
            return {}

    api = Hung()
    src = ModelArtsSource("prod", api, clock=lambda: NOW)
    src.call_timeout = 0.3
    calls = [src._call(api.list_training_jobs, 0, 50) for _ in range(8)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, ModelArtsApiError) and r.kind == "timeout" for r in results)
    assert "no answer within 0.3 s" in str(results[0])
    # meanwhile asyncio's default pool (Slurm parsing, log reads) had no SDK call on it
    assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 1) == "free"
    assert all(t.name.startswith("modelarts-prod") for t in _sdk_threads())
    api.release.set()
    await src.close()


async def test_previews_and_log_ages_follow_the_listed_jobs(server):
    src = make_source(server)
    await src.poll()
    assert len(src._logs) > 0 and src._log_seen
    held = src._logs.chars
    server.fx["jobs"].clear()  # every job left the project
    await src.poll()
    assert len(src._logs) == 0 and src._logs.chars == 0 < held
    assert src._log_seen == {}
    await src.close()


def test_preview_cache_is_bounded_by_count_and_size():
    cache = PreviewCache(max_items=3, max_chars=10)
    for i in range(5):
        cache[log_path(f"j{i}", "worker-0")] = "ab"
    assert len(cache) == 3 and log_path("j0", "worker-0") not in cache  # oldest out
    cache[log_path("big", "worker-0")] = "x" * 9
    assert cache.chars <= 10 and log_path("big", "worker-0") in cache
