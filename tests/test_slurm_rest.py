"""The slurmrestd source (``transport = "rest"``) against an HTTP server on 127.0.0.1 that
answers as the real slurmrestd 24.11/26.05 did (tests/fixtures/slurm-versions/*/rest_*.json,
captured from the daemons). No lab needed; the live comparison is tests/lab/test_versions_live.py.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from cockpit.config import load_config
from cockpit.connect import build_sources
from cockpit.errors import ConfigError
from cockpit.slurm.rest import RestClient, RestSlurmSource, token_reader

BASE = Path(__file__).parent / "fixtures" / "slurm-versions"


class FakeRestd:
    """Serves one captured version; records every request; behaviours switchable by tests."""

    def __init__(self, series: str) -> None:
        self.series = series
        self.paths = json.loads((BASE / series / "rest_openapi_paths.json").read_text())
        self.docs = {
            k: json.loads((BASE / series / f"rest_{k}.json").read_text())
            for k in ("jobs", "nodes", "partitions")
        }
        self.known = {p.rstrip("/") for p in self.paths}
        self.token = "good-token"
        self.requests: list[tuple[str, dict]] = []
        self.controller_down = False
        self.nodes_update_time_bug = False
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                u = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(u.query).items()}
                fake.requests.append((u.path, q))
                if self.headers.get("X-SLURM-USER-TOKEN") != fake.token:
                    return self._send(401, {"errors": [{"description": "Authentication failure"}]})
                if u.path == "/openapi/v3":
                    v = "24.11.5" if fake.series == "24.11" else "26.05.5"
                    doc = {"info": {"version": f"Slurm-{v}&openapi/slurmctld"}}
                    return self._send(200, doc | {"paths": {p: {} for p in fake.paths}})
                kind = u.path.rstrip("/").rsplit("/", 1)[-1]
                if u.path.rstrip("/") not in fake.known or kind not in fake.docs:
                    return self._send(404, {"errors": [{"description": "Unknown path"}]})
                if fake.controller_down:
                    err = {
                        "description": f"Failure to query {kind}",
                        "error": "Unable to contact slurm controller (connect failure)",
                    }
                    return self._send(500, {"errors": [err]})
                doc = fake.docs[kind]
                last = doc["last_update"]["number"]
                if "update_time" in q and int(q["update_time"]) >= last:
                    if kind == "nodes" and fake.nodes_update_time_bug:
                        err = {"description": "Unable to query partitions"}
                        return self._send(500, {"errors": [err]})
                    if kind == "jobs":
                        warn = {"description": f"No job changes since update_time[{last}]"}
                        return self._send(200, {"jobs": [], "warnings": [warn], "errors": []})
                    return self._send(304, None)
                return self._send(200, doc)

            def _send(self, code, doc):
                body = json.dumps(doc).encode() if doc is not None else b""
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(params=["24.11", "26.05"])
def restd(request):
    fake = FakeRestd(request.param)
    yield fake
    fake.close()


def _source(restd: FakeRestd, tmp_path, token: str = "good-token") -> RestSlurmSource:
    f = tmp_path / "token"
    f.write_text(f"SLURM_JWT={token}\n")
    return RestSlurmSource("rest", RestClient(restd.url, token_reader(None, str(f)), timeout=5))


async def test_poll_through_the_newest_data_parser(restd, tmp_path):
    src = _source(restd, tmp_path)
    snap = await src.poll()
    assert snap.ok, snap.error
    newest = {"24.11": "v0.0.42", "26.05": "v0.0.45"}[restd.series]
    assert src.parser == newest
    assert snap.slurm_version.startswith(restd.series)
    assert {p for p, _ in restd.requests} == {
        "/openapi/v3",
        *(f"/slurm/{newest}/{k}" for k in ("jobs", "nodes", "partitions")),
    }
    ids = json.loads((BASE / restd.series / "jobs.json").read_text())
    job = next(j for j in snap.jobs if j.job_id == ids["running"])
    assert job.state in ("RUNNING", "CANCELLED") and job.partition == "batch"
    c2 = next(n for n in snap.nodes if n.name == "c2")
    assert c2.is_drain and "ECC errors on DIMM B2" in c2.reason
    assert {p.name for p in snap.partitions} == {"debug", "batch", "tiny", "maint"}


async def test_unchanged_cluster_costs_one_small_request_per_kind(restd, tmp_path):
    src = _source(restd, tmp_path)
    first = await src.poll()
    restd.requests.clear()
    second = await src.poll()
    assert second.ok and len(restd.requests) == 3  # one per kind, no renegotiation
    assert all("update_time" in q for _, q in restd.requests)
    assert {j.job_id for j in second.jobs} == {j.job_id for j in first.jobs}
    assert [n.name for n in second.nodes] == [n.name for n in first.nodes]
    assert [p.name for p in second.partitions] == [p.name for p in first.partitions]


async def test_nodes_update_time_refusal_falls_back_to_a_full_read(restd, tmp_path):
    restd.nodes_update_time_bug = True
    src = _source(restd, tmp_path)
    await src.poll()
    snap = await src.poll()
    assert snap.ok and len(snap.nodes) == 4
    restd.requests.clear()
    await src.poll()  # remembered: no second failed try
    nodes_asks = [q for p, q in restd.requests if p.endswith("/nodes")]
    assert nodes_asks == [{}]


async def test_bad_or_expired_token_is_a_status_line_error(restd, tmp_path):
    snap = await _source(restd, tmp_path, token="expired").poll()
    assert snap.error is not None and snap.error.kind == "auth"
    assert "HTTP 401" in snap.error.message and "scontrol token" in snap.error.message
    assert snap.jobs == ()


async def test_missing_token_never_reaches_the_server(restd, monkeypatch):
    monkeypatch.delenv("COCKPIT_TEST_JWT", raising=False)
    src = RestSlurmSource("r", RestClient(restd.url, token_reader("COCKPIT_TEST_JWT", None)))
    snap = await src.poll()
    assert snap.error.kind == "auth" and "$COCKPIT_TEST_JWT is not set" in snap.error.message
    assert restd.requests == []


async def test_controller_down_says_so(restd, tmp_path):
    src = _source(restd, tmp_path)
    assert (await src.poll()).ok
    restd.controller_down = True
    snap = await src.poll()
    assert snap.error.kind == "unreachable"
    assert "Unable to contact slurm controller" in snap.error.message
    restd.controller_down = False
    assert (await src.poll()).ok


async def test_server_gone_is_unreachable(tmp_path):
    fake = FakeRestd("24.11")
    fake.close()
    snap = await _source(fake, tmp_path).poll()
    assert snap.error.kind == "unreachable" and fake.url in snap.error.message


def test_config_builds_a_rest_cluster(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[clusters.gw]\ntransport = "rest"\nurl = "http://h:6820"\ntoken_env = "JWT"\n')
    (src,) = build_sources(load_config(cfg))
    assert isinstance(src, RestSlurmSource) and src.client.url == "http://h:6820"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('url = "http://h:1"\n', "one of token_env or token_file"),
        ('url = "http://h:1"\ntoken_env = "A"\ntoken_file = "/t"\n', "one of token_env"),
        ('token_env = "A"\n', "needs url"),
        ('url = "http://h:1"\ntoken_env = "eyJhbGciOi.x.y"\n', "never the token itself"),
    ],
)
def test_config_rest_mistakes_are_one_line(tmp_path, body, says):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[clusters.gw]\ntransport = "rest"\n{body}')
    with pytest.raises(ConfigError, match=says):
        load_config(cfg)
