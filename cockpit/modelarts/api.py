"""The ModelArts v2 API as wire JSON dicts, through the real ``huaweicloudsdkmodelarts``.

:class:`ModelArtsApi` is what :class:`cockpit.modelarts.source.ModelArtsSource` and the
demo code against: blocking methods returning the untouched JSON the service sent
(``resp.to_json_object()``), so the pure parsers in ``modelarts_parse`` see exactly the
wire names (``availableResources``, ``nvidia.com/gpu``, ...).

:class:`SdkModelArtsApi` wraps one shared sync ``ModelArtsClient``. The SDK takes about a
second to import, so it is imported inside functions only (start-up stays fast). Every
failure becomes :class:`ModelArtsApiError` with a ``kind`` matching
``cockpit.model.SourceError.kind``; the SDK's loggers are silenced because they print to
stderr, which would tear the TUI.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

# Loggers the SDK creates per client class (``HuaweiCloud-SDK-<ClassName>``), all with
# propagate=False and no handler, so Python's last-resort handler prints to stderr.
SDK_LOGGERS = (
    "HuaweiCloud-SDK-ModelArtsClient",
    "HuaweiCloud-SDK-ModelArtsAsyncClient",
    "HuaweiCloud-SDK-Client",
    "HuaweiCloud-SDK",
    "huaweicloudsdkcore",
)

DEFAULT_TIMEOUT: tuple[float, float] = (3.0, 10.0)  # (connect, read) seconds


class ModelArtsApiError(Exception):
    """A failed API call.

    ``kind``: auth (401) | forbidden (403) | not_found (404) | throttled (429) |
    server (5xx) | timeout | unreachable | parse | config. ``status`` is the HTTP status
    (None when no response), ``code`` the service's ``error_code`` (``APIGW.0301``,
    ``ModelArts.xxxx``), ``retry_after_s`` the server's ``Retry-After`` for 429s.
    """

    def __init__(
        self,
        kind: str,
        status: int | None,
        code: str,
        message: str,
        retry_after_s: float | None = None,
        where: str = "",
    ) -> None:
        super().__init__(f"{kind}: {message}" + (f" ({code})" if code else ""))
        self.kind, self.status, self.code, self.message = kind, status, code, message
        self.retry_after_s = retry_after_s
        self.where = where


@runtime_checkable
class ModelArtsApi(Protocol):
    """Blocking ModelArts v2 calls returning wire JSON (dict). Raise ModelArtsApiError.

    The source runs each call in a worker thread; an implementation that answers from
    memory (the demo site) sets a class attribute ``blocking = False`` to be called on the
    event loop instead; while such an API's ``ready`` attribute is false (its memory not built
    yet) its calls still go to a thread."""

    def list_training_jobs(self, offset: int, limit: int, phases: Sequence[str] = ()) -> dict:
        """POST /training-job-searches, newest first: {total, count, items[JobResponse]}
        (limit <= 50). ``phases``: only jobs in these phases (the search's ``filters`` entry
        ``{"key": "phase", "operator": "in"}``); empty: every job."""
        ...

    def show_training_job(self, job_id: str) -> dict:
        """GET /training-jobs/{id}: {kind, metadata, status, algorithm, spec, ...}."""
        ...

    def list_events(self, job_id: str) -> dict:
        """GET /training-jobs/{id}/events: {total, events[{time, level, source, message}]}."""
        ...

    def list_stages(self, job_id: str) -> dict:
        """GET /training-jobs/{id}/stages.

        Returns {total_count, running_records[{record_order, stages}]}."""
        ...

    def logs_preview(self, job_id: str, task_id: str) -> dict:
        """GET .../tasks/{task}/logs/preview: {content, current_size, full_size} (<= 5 MB)."""
        ...

    def list_pools(self) -> dict:
        """GET /pools: {kind: PoolList, items[Pool]}."""
        ...

    def list_pool_nodes(self, pool_name: str) -> dict:
        """GET /pools/{name}/nodes: {kind: NodeList, items[Node]} (all pages merged)."""
        ...

    def flavor_max_available(self, flavor_id: str, pool_id: str) -> dict:
        """GET /training-pool-flavors: {cpu_core_num, mem_size (GB)}."""
        ...

    def stop_training_job(self, job_id: str) -> dict:
        """POST /training-jobs/{id}/actions {"action_type": "terminate"}: only jobs creating,
        pending or running can be stopped; the job then goes Terminating -> Terminated."""
        ...


def silence_sdk_loggers() -> None:
    """Give the SDK's loggers a NullHandler so nothing reaches stderr."""
    for name in SDK_LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
            log.addHandler(logging.NullHandler())
        log.propagate = False


_STATUS_KIND = {401: "auth", 403: "forbidden", 404: "not_found", 429: "throttled"}


def kind_for_status(status: int) -> str:
    """HTTP status -> SourceError kind (4xx not listed -> "command", 5xx -> "server")."""
    if status >= 500:
        return "server"
    return _STATUS_KIND.get(status, "command")


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # HTTP-date form: rare on API gateways; fall back to backoff


def _make_exception_handler() -> Any:
    """A DefaultExceptionHandler that also records Retry-After on the raised exception.

    The SDK's exceptions do not keep response headers; ``with_exception_handler`` is its
    public hook for exactly this.
    """
    from huaweicloudsdkcore.exceptions.exception_handler import DefaultExceptionHandler
    from huaweicloudsdkcore.exceptions.exceptions import ServiceResponseException

    class RetryAfterExceptionHandler(DefaultExceptionHandler):
        def handle_exception(self, request: Any, response: Any) -> None:
            try:
                super().handle_exception(request, response)
            except ServiceResponseException as exc:
                exc.cockpit_retry_after = _retry_after(response.headers.get("Retry-After"))  # type: ignore[attr-defined]
                raise

    return RetryAfterExceptionHandler()


@dataclass(frozen=True, slots=True)
class SdkSettings:
    """How to reach one ModelArts project. ``endpoint`` overrides ``region``'s URL."""

    ak: str
    sk: str
    project_id: str
    region: str = ""
    endpoint: str = ""
    workspace: str = ""
    verify_ssl: bool = True
    timeout: tuple[float, float] = DEFAULT_TIMEOUT
    security_token: str = ""


class SdkModelArtsApi:
    """:class:`ModelArtsApi` over one shared sync ``ModelArtsClient`` (thread-safe enough:
    requests' session pool, no per-call state). Build lazily on first call."""

    def __init__(self, settings: SdkSettings, *, client: Any = None) -> None:
        if not settings.project_id:
            # Without it the SDK calls IAM to discover it (or sends "{project_id}" literally).
            raise ValueError("project_id is required")
        self.settings = settings
        self._client = client
        self._lock = threading.Lock()
        silence_sdk_loggers()

    @property
    def base_url(self) -> str:
        return self.settings.endpoint or f"modelarts.{self.settings.region}"

    # ------------------------------------------------------------------ client

    def client(self) -> Any:
        """The shared ``ModelArtsClient`` (built once; imports the SDK on first use)."""
        with self._lock:
            if self._client is None:
                self._client = self._build()
            return self._client

    def _build(self) -> Any:
        from huaweicloudsdkcore.auth.credentials import BasicCredentials
        from huaweicloudsdkcore.http.http_config import HttpConfig
        from huaweicloudsdkmodelarts.v1 import ModelArtsClient

        s = self.settings
        cfg = HttpConfig.get_default_config()
        cfg.timeout = s.timeout
        cfg.retry_times = 0  # the source owns retries and backoff
        cfg.ignore_ssl_verification = not s.verify_ssl
        creds = BasicCredentials(s.ak, s.sk, s.project_id)
        if s.security_token:
            creds = creds.with_security_token(s.security_token)
        builder = (
            ModelArtsClient.new_builder()
            .with_credentials(creds)
            .with_http_config(cfg)
            .with_exception_handler(_make_exception_handler())
        )
        if s.endpoint:
            builder = builder.with_endpoint(s.endpoint)
        else:
            from huaweicloudsdkmodelarts.v1.region.modelarts_region import ModelArtsRegion

            try:
                builder = builder.with_region(ModelArtsRegion.value_of(s.region))
            except KeyError as exc:
                raise ModelArtsApiError(
                    "config", None, "", f"unknown ModelArts region {s.region!r}"
                ) from exc
        client = builder.build()
        silence_sdk_loggers()
        return client

    # ------------------------------------------------------------------ calls

    def _call(self, op: str, method: str, request: Any, *, bare_array: bool = False) -> dict:
        """Run one SDK call and return its wire JSON; map every failure to ModelArtsApiError."""
        import requests
        from huaweicloudsdkcore.exceptions import exceptions as sdkexc

        where = f"{self.base_url} {op}"
        try:
            resp = getattr(self.client(), method)(request)
            data = resp.to_json_object()
        except sdkexc.ServiceResponseException as exc:
            status = int(exc.status_code or 0)
            raise ModelArtsApiError(
                kind_for_status(status),
                status,
                str(exc.error_code or ""),
                str(exc.error_msg or f"HTTP {status}")[:500],
                getattr(exc, "cockpit_retry_after", None),
                where,
            ) from None
        except (requests.exceptions.Timeout, sdkexc.RequestTimeoutException) as exc:
            # The SDK lets requests' ReadTimeout escape unwrapped.
            raise ModelArtsApiError(
                "timeout",
                None,
                "",
                f"no answer within {self.settings.timeout[1]:g} s ({type(exc).__name__})",
                None,
                where,
            ) from None
        except sdkexc.ConnectionException as exc:
            raise ModelArtsApiError(
                "unreachable", None, "", str(exc.error_msg)[:300], None, where
            ) from None
        except (
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ) as exc:
            raise ModelArtsApiError(
                "parse", None, "", f"truncated response: {type(exc).__name__}", None, where
            ) from None
        except requests.exceptions.RequestException as exc:
            raise ModelArtsApiError(
                "unreachable", None, "", f"{type(exc).__name__}: {exc}"[:300], None, where
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            # malformed JSON body, or the SDK failing to coerce a field ("n/a" into int)
            raise ModelArtsApiError(
                "parse", None, "", f"malformed response body: {exc}"[:300], None, where
            ) from None
        if bare_array:
            data = {"items": data} if isinstance(data, list) else data
        if not isinstance(data, dict):
            raise ModelArtsApiError(
                "parse", None, "", f"expected a JSON object, got {type(data).__name__}", None, where
            )
        return data

    def list_training_jobs(self, offset: int, limit: int, phases: Sequence[str] = ()) -> dict:
        from huaweicloudsdkmodelarts.v1 import Filter, JobSearches, ListTrainingJobsRequest

        body = JobSearches(offset=offset, limit=limit, sort_by="create_time", order="desc")
        if phases:
            body.filters = [Filter(key="phase", operator="in", value=list(phases))]
        if self.settings.workspace:
            body.workspace_id = self.settings.workspace
        return self._call(
            "POST /training-job-searches", "list_training_jobs", ListTrainingJobsRequest(body=body)
        )

    def show_training_job(self, job_id: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import ShowTrainingJobDetailsRequest

        return self._call(
            f"GET /training-jobs/{job_id}",
            "show_training_job_details",
            ShowTrainingJobDetailsRequest(training_job_id=job_id),
        )

    def list_events(self, job_id: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import ListTrainingJobEventsRequest

        req = ListTrainingJobEventsRequest(training_job_id=job_id, limit=100, order="desc")
        return self._call(f"GET /training-jobs/{job_id}/events", "list_training_job_events", req)

    def list_stages(self, job_id: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import ListTrainingJobStagesRequest

        return self._call(
            f"GET /training-jobs/{job_id}/stages",
            "list_training_job_stages",
            ListTrainingJobStagesRequest(training_job_id=job_id),
        )

    def logs_preview(self, job_id: str, task_id: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import ShowTrainingJobLogsPreviewRequest

        req = ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id=task_id)
        return self._call(
            f"GET /training-jobs/{job_id}/tasks/{task_id}/logs/preview",
            "show_training_job_logs_preview",
            req,
        )

    def list_pools(self) -> dict:
        from huaweicloudsdkmodelarts.v1 import ListPoolsRequest

        req = ListPoolsRequest(workspace_id=self.settings.workspace or None)
        return self._call("GET /pools", "list_pools", req)

    def list_pool_nodes(self, pool_name: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import ListPoolNodesRequest

        items: list = []
        cont: str | None = None
        first: dict = {}
        for _ in range(20):  # 20 pages x 500 nodes: far beyond any real pool
            page = self._call(
                f"GET /pools/{pool_name}/nodes",
                "list_pool_nodes",
                ListPoolNodesRequest(pool_name=pool_name, limit=500, _continue=cont),
            )
            first = first or page
            items.extend(page.get("items") or [])
            cont = ((page.get("metadata") or {}).get("continue")) or None
            if not cont:
                break
        return {**first, "items": items}

    def flavor_max_available(self, flavor_id: str, pool_id: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import ShowTrainingFlavorMaxAvailableResourceRequest

        req = ShowTrainingFlavorMaxAvailableResourceRequest(flavor_id=flavor_id, pool_id=pool_id)
        return self._call(
            "GET /training-pool-flavors", "show_training_flavor_max_available_resource", req
        )

    def stop_training_job(self, job_id: str) -> dict:
        from huaweicloudsdkmodelarts.v1 import JobActionType, StopTrainingJobRequest

        req = StopTrainingJobRequest(
            training_job_id=job_id, body=JobActionType(action_type="terminate")
        )
        return self._call(f"POST /training-jobs/{job_id}/actions", "stop_training_job", req)

    def close(self) -> None:
        client = self._client
        if client is not None:
            http = getattr(client, "_http_client", None)
            if http is not None and hasattr(http, "close"):
                http.close()
