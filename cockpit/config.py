"""The cockpit's TOML config: clusters (Slurm over local/SSH), ModelArts projects, UI.

Located at ``--config FILE`` or ``platformdirs.user_config_dir("cockpit")/config.toml``
(``~/.config/cockpit/config.toml``). A missing default file is not an error: the
config then has no sources and the cockpit runs its demo. Every problem (TOML syntax,
unknown key, wrong type, value out of range) raises :class:`ConfigError` naming the
file, the line and the key.

Example::

    [clusters.lab]
    transport = "ssh"            # or "local"
    host = "127.0.0.1"
    port = 2222
    user = "root"
    key = "~/.ssh/id_ed25519"
    known_hosts = "~/.ssh/known_hosts"
    interval = 15                # seconds, at least 5
    evidence = "failures"        # or "drill-down": sacct/logs only for the job you open
    backfill_hours = 12          # failed jobs looked for on a first start (no store cursor)

    [risk]                       # running jobs named at risk before they fail
    memory_near = 0.9            # sstat MaxRSS at this share of the request: a warning
    sample_budget = 50           # running jobs sampled per poll (one sstat, one stat)
    log_silent_s = 1800          # stdout not grown this long: a warning
    [risk.log_silent_partitions]
    gpu = 3600

    [modelarts.prod]
    region = "cn-north-4"
    project_id = "0b1e8c5d2f9a4c6e8d7f0a1b2c3d4e5f"
    ak_env = "HUAWEICLOUD_SDK_AK"
    sk_env = "HUAWEICLOUD_SDK_SK"
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.errors import ConfigError, ConfigErrors
from cockpit.i18n import _
from cockpit.model import RiskSettings

MIN_INTERVAL = 5.0  # seconds; faster polling loads the controller for nothing


def default_config_path() -> Path:
    """``<XDG config dir>/cockpit/config.toml``."""
    import platformdirs

    return Path(platformdirs.user_config_dir("cockpit")) / "config.toml"


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """One Slurm cluster. ``known_hosts=None`` only with ``insecure_ignore_host_key``."""

    name: str
    transport: str = "local"  # local | ssh
    host: str = ""
    port: int = 22
    user: str | None = None
    key: str | None = None
    known_hosts: str | None = "~/.ssh/known_hosts"
    interval: float = 15.0  # seconds between polls
    # "": where the cluster's slurm.conf says (scontrol show config), else Slurm's default
    slurmctld_log: str = ""
    slurmd_log: str = ""  # %n = node name
    timezone: str = "UTC"  # zone Slurm prints its local times in
    storage_paths: tuple[str, ...] = ()
    allow_actions: bool = False
    ssh_config: bool = True  # honour ~/.ssh/config
    insecure_ignore_host_key: bool = False
    connect_timeout: float = 10.0  # seconds
    command_timeout: float = 20.0  # seconds
    # "failures": each poll fetches sacct/logs for newly failed jobs (one batched sacct), so
    # the dashboard names causes; "drill-down": only for the job or node opened
    evidence: str = "failures"
    # failures ended while no cockpit ran: how far back a first start asks sacct (the store's
    # cursor wins when there is one), and how long a failed job squeue forgot stays shown
    backfill_hours: float = 12.0
    # transport = "rest": slurmrestd's URL and where its JWT comes from (one of the two)
    url: str = ""
    token_env: str | None = None
    token_file: str | None = None


@dataclass(frozen=True, slots=True)
class ModelArtsConfig:
    """One ModelArts project. Keys come from the named environment variables, never the file."""

    name: str
    region: str = ""
    endpoint: str = ""
    project_id: str = ""
    workspace: str = ""
    ak_env: str = "HUAWEICLOUD_SDK_AK"
    sk_env: str = "HUAWEICLOUD_SDK_SK"
    interval: float = 30.0
    verify_ssl: bool = True
    allow_actions: bool = False  # 'a' in a drill-down may stop training jobs
    # ended training jobs kept and shown, the most recently ended (every active one always is)
    max_ended_jobs: int = 500
    # Running jobs' log previews read per poll, round robin, for silent logs (0: none)
    running_log_reads: int = 5


@dataclass(frozen=True, slots=True)
class UiConfig:
    bell: bool = True
    theme: str | None = None
    export_dir: str | None = None  # where `x` in the incident view writes; None: current directory
    lang: str | None = None  # "en" or "zh"; None: the environment's (LANG...), cockpit.i18n


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """``[store]``: where incidents, acks and alert deliveries are kept (cockpit.store)."""

    url: str = ""  # "": the SQLite file in the state dir; "postgresql://..." for a team
    retention_days: float = 7.0  # resolved/acknowledged incidents are forgotten after this
    # one poller for a team: `cockpit watch` publishes each poll to the store and the TUIs
    # read it from there instead of polling the clusters and projects themselves
    follow: bool = False


@dataclass(frozen=True, slots=True)
class WebConfig:
    """``[web]``: the browser head (``cockpit web``)."""

    # guarded actions from a browser session: off unless said here (each one is audited with
    # the session's identity); a cluster's own allow_actions must also be on
    actions: bool = False


@dataclass(frozen=True, slots=True)
class Config:
    path: str = ""
    clusters: dict[str, ClusterConfig] = field(default_factory=dict)
    modelarts: dict[str, ModelArtsConfig] = field(default_factory=dict)
    ui: UiConfig = field(default_factory=UiConfig)
    alerts: dict[str, Any] = field(
        default_factory=dict
    )  # raw [alerts] table, read by the alerts issue
    exists: bool = True  # False when the default file was absent
    store: StoreConfig = field(default_factory=StoreConfig)
    web: WebConfig = field(default_factory=WebConfig)
    risk: RiskSettings = field(default_factory=RiskSettings)

    @property
    def has_sources(self) -> bool:
        return bool(self.clusters or self.modelarts)


# field -> (accepted types, description)
_CLUSTER_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "transport": ((str,), "string"),
    "host": ((str,), "string"),
    "port": ((int,), "integer"),
    "user": ((str,), "string"),
    "key": ((str,), "string"),
    "known_hosts": ((str,), "string"),
    "interval": ((int, float), "number"),
    "slurmctld_log": ((str,), "string"),
    "slurmd_log": ((str,), "string"),
    "timezone": ((str,), "string"),
    "storage_paths": ((list,), "list of strings"),
    "allow_actions": ((bool,), "boolean"),
    "ssh_config": ((bool,), "boolean"),
    "insecure_ignore_host_key": ((bool,), "boolean"),
    "connect_timeout": ((int, float), "number"),
    "command_timeout": ((int, float), "number"),
    "evidence": ((str,), "string"),
    "backfill_hours": ((int, float), "number"),
    "url": ((str,), "string"),
    "token_env": ((str,), "string"),
    "token_file": ((str,), "string"),
}
_MODELARTS_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "region": ((str,), "string"),
    "endpoint": ((str,), "string"),
    "project_id": ((str,), "string"),
    "workspace": ((str,), "string"),
    "ak_env": ((str,), "string"),
    "sk_env": ((str,), "string"),
    "interval": ((int, float), "number"),
    "verify_ssl": ((bool,), "boolean"),
    "allow_actions": ((bool,), "boolean"),
    "max_ended_jobs": ((int,), "integer"),
    "running_log_reads": ((int,), "integer"),
}
_UI_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "bell": ((bool,), "boolean"),
    "theme": ((str,), "string"),
    "export_dir": ((str,), "string"),
    "lang": ((str,), "string"),
}
_STORE_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "url": ((str,), "string"),
    "retention_days": ((int, float), "number"),
    "follow": ((bool,), "boolean"),
}
_WEB_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "actions": ((bool,), "boolean"),
}
_RISK_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "memory_near": ((int, float), "number"),
    "memory_critical": ((int, float), "number"),
    "sample_budget": ((int,), "integer"),
    "log_silent_s": ((int, float), "number"),
    "log_silent_partitions": ((dict,), "table"),
}
_TOP = {"clusters", "modelarts", "ui", "alerts", "store", "web", "risk"}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


class _Loader:
    def __init__(self, path: str, text: str) -> None:
        self.path, self.lines = path, text.splitlines()

    def line_of(self, dotted: str) -> int | None:
        """Best-effort line of a key: its table header, then ``key =`` inside that table."""
        parts = dotted.split(".")
        table, key = parts[:-1], parts[-1]
        start = 0
        if table:
            hdr = re.compile(
                r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in table) + r"\s*\]"
            )
            for i, ln in enumerate(self.lines):
                if hdr.match(ln):
                    start = i
                    break
            else:
                return self._find_key(key, 0, len(self.lines)) or self._find_table(dotted)
        end = next(
            (
                i
                for i in range(start + 1, len(self.lines))
                if self.lines[i].lstrip().startswith("[")
            ),
            len(self.lines),
        )
        found = self._find_key(key, start, end)
        if found:
            return found
        return self._find_table(dotted) or start + 1

    def _find_key(self, key: str, start: int, end: int) -> int | None:
        pat = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
        for i in range(start, end):
            if pat.match(self.lines[i]):
                return i + 1
        return None

    def _find_table(self, dotted: str) -> int | None:
        hdr = re.compile(
            r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in dotted.split(".")) + r"\s*\]"
        )
        return next((i + 1 for i, ln in enumerate(self.lines) if hdr.match(ln)), None)

    def error(self, dotted: str, message: str) -> ConfigError:
        return ConfigError(message, path=self.path, line=self.line_of(dotted), key=dotted)

    def check(
        self,
        dotted_prefix: str,
        table: dict[str, Any],
        spec: dict[str, tuple[tuple[type, ...], str]],
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        errors: list[ConfigError] = []  # every key's problem at once, not the first only
        for k, v in table.items():
            problem = self._key_problem(f"{dotted_prefix}.{k}", k, v, spec)
            if problem is None:
                out[k] = v
            else:
                errors.append(problem)
        if errors:
            raise errors[0] if len(errors) == 1 else ConfigErrors(errors)
        return out

    def _key_problem(
        self, dotted: str, k: str, v: Any, spec: dict[str, tuple[tuple[type, ...], str]]
    ) -> ConfigError | None:
        """What is wrong with one key of a table (None: nothing)."""
        if k not in spec:
            return self.error(
                dotted,
                _("unknown key {key} (known: {known})").format(
                    key=repr(k), known=", ".join(sorted(spec))
                ),
            )
        types, desc = spec[k]
        if isinstance(v, bool) and bool not in types:
            return self.error(
                dotted, _("must be {a} {type}, not a boolean").format(a=_article(desc), type=desc)
            )
        if not isinstance(v, types):
            return self.error(
                dotted,
                _("must be {a} {type}, not {got} {value}").format(
                    a=_article(desc), type=desc, got=type(v).__name__, value=repr(v)
                ),
            )
        if desc == "list of strings" and not all(isinstance(x, str) for x in v):
            return self.error(dotted, _("must be a list of strings"))
        return None

    def interval(self, dotted: str, value: float) -> float:
        if not math.isfinite(
            value
        ):  # nan passed the floor check and polled every second; inf never
            raise self.error(
                dotted,
                _("interval must be a finite number of seconds, not {value}").format(value=value),
            )
        if value < MIN_INTERVAL:
            raise self.error(
                dotted,
                _("interval {value} s is below the floor of {floor} s").format(
                    value=f"{value:g}", floor=f"{MIN_INTERVAL:g}"
                ),
            )
        return float(value)

    def timeout(self, dotted: str, value: float) -> float:
        if not (math.isfinite(value) and value > 0):  # 0/-1 timed every command out at once
            raise self.error(
                dotted,
                _("timeout must be a positive number of seconds, not {value}").format(value=value),
            )
        return float(value)


def _check_rest(ld: _Loader, prefix: str, v: dict[str, Any]) -> None:
    """A slurmrestd cluster: an http(s) url and exactly one of token_env / token_file (the
    token itself never sits in the config)."""
    if not re.match(r"https?://[^\s/]+", v.get("url", "")):
        raise ld.error(f"{prefix}.url", _('a rest cluster needs url = "http(s)://host:port"'))
    if ("token_env" in v) == ("token_file" in v):
        raise ld.error(
            f"{prefix}.token_env", _("a rest cluster needs one of token_env or token_file")
        )
    if "token_env" in v and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v["token_env"]):
        raise ld.error(
            f"{prefix}.token_env",
            _("token_env names an environment variable, e.g. SLURM_JWT (never the token itself)"),
        )


def _table(ld: _Loader, data: dict[str, Any], key: str) -> dict[str, Any]:
    v = data.get(key, {})
    if not isinstance(v, dict):
        raise ld.error(key, _("{key} must be a table ([{key}.NAME])").format(key=key))
    return v


def _cluster(ld: _Loader, name: str, raw: Any) -> ClusterConfig:
    """One ``[clusters.NAME]`` table; raises ConfigError on its first problem."""
    prefix = f"clusters.{name}"
    if not isinstance(raw, dict):
        raise ld.error(prefix, _("must be a table"))
    if not _NAME_RE.match(name):
        raise ld.error(prefix, _("cluster names use letters, digits, '.', '_' and '-'"))
    v = ld.check(prefix, raw, _CLUSTER_KEYS)
    # a host with no transport is an SSH cluster: "local" would silently watch whatever Slurm
    # the cockpit's own machine answers for, and call it this cluster
    transport = v.get("transport", "ssh" if v.get("host") else "local")
    if transport not in ("local", "ssh", "rest"):
        raise ld.error(
            f"{prefix}.transport",
            _("transport must be 'local', 'ssh' or 'rest', not {value}").format(
                value=repr(transport)
            ),
        )
    if transport == "rest":
        _check_rest(ld, prefix, v)
    if transport == "ssh" and not v.get("host"):
        raise ld.error(f"{prefix}.host", _("an ssh cluster needs host"))
    port = v.get("port", 22)
    if not 0 < port < 65536:
        raise ld.error(f"{prefix}.port", _("port {port} is out of range").format(port=port))
    kh = v.get("known_hosts", "~/.ssh/known_hosts")
    insecure = v.get("insecure_ignore_host_key", False)
    if kh.lower() == "none":
        if not insecure:
            raise ld.error(
                f"{prefix}.known_hosts",
                _('known_hosts = "none" needs insecure_ignore_host_key = true'),
            )
        kh = None
    tz = v.get("timezone", "UTC")
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(tz)
    except Exception:
        raise ld.error(
            f"{prefix}.timezone", _("unknown time zone {tz}").format(tz=repr(tz))
        ) from None
    evidence = v.get("evidence", "failures")
    if evidence not in ("failures", "drill-down"):
        raise ld.error(
            f"{prefix}.evidence",
            _("must be 'failures' or 'drill-down', not {value}").format(value=repr(evidence)),
        )
    backfill = v.get("backfill_hours", 12.0)
    if not 0 < backfill <= 24 * 7:
        raise ld.error(f"{prefix}.backfill_hours", _("must be between 0 and 168 hours"))
    return ClusterConfig(
        name=name,
        transport=transport,
        host=v.get("host", ""),
        port=port,
        user=v.get("user"),
        key=v.get("key"),
        known_hosts=kh,
        interval=ld.interval(f"{prefix}.interval", v.get("interval", 15)),
        # the field defaults (on a slots dataclass the class attribute is a
        # member_descriptor, not the default)
        slurmctld_log=v.get(
            "slurmctld_log", ClusterConfig.__dataclass_fields__["slurmctld_log"].default
        ),
        slurmd_log=v.get("slurmd_log", ClusterConfig.__dataclass_fields__["slurmd_log"].default),
        timezone=tz,
        storage_paths=tuple(v.get("storage_paths", ())),
        allow_actions=v.get("allow_actions", False),
        ssh_config=v.get("ssh_config", True),
        insecure_ignore_host_key=insecure,
        connect_timeout=ld.timeout(f"{prefix}.connect_timeout", v.get("connect_timeout", 10.0)),
        command_timeout=ld.timeout(f"{prefix}.command_timeout", v.get("command_timeout", 20.0)),
        evidence=evidence,
        url=v.get("url", ""),
        token_env=v.get("token_env"),
        token_file=v.get("token_file"),
        backfill_hours=float(backfill),
    )


def _modelarts(ld: _Loader, name: str, raw: Any) -> ModelArtsConfig:
    """One ``[modelarts.NAME]`` table; raises ConfigError on its first problem."""
    prefix = f"modelarts.{name}"
    if not isinstance(raw, dict):
        raise ld.error(prefix, _("must be a table"))
    if not _NAME_RE.match(name):
        raise ld.error(prefix, _("project names use letters, digits, '.', '_' and '-'"))
    v = ld.check(prefix, raw, _MODELARTS_KEYS)
    if not v.get("project_id"):
        raise ld.error(f"{prefix}.project_id", _("project_id is required"))
    if not v.get("region") and not v.get("endpoint"):
        raise ld.error(f"{prefix}.region", _("region (or endpoint) is required"))
    if v.get("max_ended_jobs", 1) < 1:
        raise ld.error(f"{prefix}.max_ended_jobs", _("max_ended_jobs must be at least 1"))
    if not 0 <= v.get("running_log_reads", 5) <= 100:
        # each read is one request of up to 5 MB
        raise ld.error(
            f"{prefix}.running_log_reads",
            _("running_log_reads is requests per poll: 0 (off) to 100"),
        )
    for k in ("ak_env", "sk_env"):
        if k in v and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v[k]):
            raise ld.error(
                f"{prefix}.{k}",
                _(
                    "{key} names an environment variable, e.g. "
                    "HUAWEICLOUD_SDK_AK (never the key itself)"
                ).format(key=k),
            )
    return ModelArtsConfig(
        name=name,
        region=v.get("region", ""),
        endpoint=v.get("endpoint", ""),
        project_id=v["project_id"],
        workspace=v.get("workspace", ""),
        ak_env=v.get("ak_env", "HUAWEICLOUD_SDK_AK"),
        sk_env=v.get("sk_env", "HUAWEICLOUD_SDK_SK"),
        interval=ld.interval(f"{prefix}.interval", v.get("interval", 30)),
        verify_ssl=v.get("verify_ssl", True),
        allow_actions=v.get("allow_actions", False),
        max_ended_jobs=v.get("max_ended_jobs", 500),
        running_log_reads=v.get("running_log_reads", 5),
    )


def _ui(ld: _Loader, data: dict) -> UiConfig:
    ui_raw = _table(ld, data, "ui")
    try:
        ui_v = ld.check("ui", ui_raw, _UI_KEYS)
        problems: list[ConfigError] = []
    except ConfigError as exc:  # the key problems and a bad lang, said together
        ui_v, problems = {}, list(getattr(exc, "errors", [exc]))
    lang = ui_raw.get("lang")
    if isinstance(lang, str):
        from cockpit.i18n import LANGUAGES, normalize

        if normalize(lang) is None:
            problems.append(
                ld.error(
                    "ui.lang",
                    _('lang must be one of {languages} (got "{lang}")').format(
                        languages=", ".join(LANGUAGES), lang=lang
                    ),
                )
            )
        lang = normalize(lang)
    else:
        lang = None
    if problems:
        raise problems[0] if len(problems) == 1 else ConfigErrors(problems)
    return UiConfig(
        bell=ui_v.get("bell", True),
        theme=ui_v.get("theme"),
        export_dir=ui_v.get("export_dir"),
        lang=lang,
    )


def _store(ld: _Loader, data: dict) -> StoreConfig:
    store_v = ld.check("store", _table(ld, data, "store"), _STORE_KEYS)
    retention = float(store_v.get("retention_days", 7.0))
    if not (0 < retention <= 3650) or math.isnan(retention):
        raise ld.error("store.retention_days", _("retention_days must be between 0 and 3650"))
    url = store_v.get("url", "").strip()
    if url and not url.startswith(("sqlite:", "postgresql:", "postgresql+psycopg:", "postgres:")):
        raise ld.error("store.url", _('url must start with "sqlite:///" or "postgresql://"'))
    if url.startswith("postgres:"):  # libpq's spelling; SQLAlchemy wants the long one
        url = "postgresql:" + url[len("postgres:") :]
    return StoreConfig(url=url, retention_days=retention, follow=bool(store_v.get("follow", False)))


def _web(ld: _Loader, data: dict) -> WebConfig:
    web_v = ld.check("web", _table(ld, data, "web"), _WEB_KEYS)
    return WebConfig(actions=web_v.get("actions", False))


def _risk(ld: _Loader, data: dict) -> RiskSettings:
    """``[risk]``: when a running job is named at risk (memory near its request, silent
    stdout) and how many running jobs a poll samples for it."""
    v = ld.check("risk", _table(ld, data, "risk"), _RISK_KEYS)
    d = RiskSettings()
    near = float(v.get("memory_near", d.memory_near))
    if not 0 < near <= 1 or math.isnan(near):
        raise ld.error("risk.memory_near", _("memory_near is a share of the request: 0 < it <= 1"))
    critical = float(v.get("memory_critical", max(d.memory_critical, near)))
    if not near <= critical <= 1.5 or math.isnan(critical):
        raise ld.error(
            "risk.memory_critical",
            _("memory_critical must be at least memory_near and at most 1.5"),
        )
    budget = v.get("sample_budget", d.sample_budget)
    if not 0 <= budget <= 5000:
        raise ld.error("risk.sample_budget", _("sample_budget is jobs per poll: 0 (off) to 5000"))

    def seconds(key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ld.error(
                key, _("must be a number of seconds, not {value}").format(value=repr(value))
            )
        if not (math.isfinite(value) and value > 0):
            raise ld.error(
                key, _("must be a positive number of seconds, not {value}").format(value=value)
            )
        return float(value)

    silent = seconds("risk.log_silent_s", v.get("log_silent_s", d.log_silent_s))
    parts = tuple(
        (str(name), seconds(f"risk.log_silent_partitions.{name}", value))
        for name, value in v.get("log_silent_partitions", {}).items()
    )
    return RiskSettings(near, critical, int(budget), silent, parts)


def located(exc: ConfigError) -> ConfigError:
    """``exc`` with the line of each problem a parser named only by its key (``[alerts]`` is
    parsed by the watcher's own), found in the file, so every head names the same line."""
    errors = getattr(exc, "errors", [exc])
    if all(e.line or not e.key or not e.path for e in errors):
        return exc
    try:
        text = Path(errors[0].path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return exc
    ld = _Loader(errors[0].path, text)
    out = [
        e if e.line or not e.key else ConfigError(e.message, e.path, ld.line_of(e.key), e.key)
        for e in errors
    ]
    return out[0] if len(out) == 1 else ConfigErrors(out)


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate the config. ``path=None``: the default path, absent -> empty Config.

    An explicit path that does not exist is a ConfigError (the user asked for it).
    Raises ConfigError naming file, line and key for every problem.
    """
    explicit = path is not None
    p = Path(path).expanduser() if explicit else default_config_path()
    if not p.exists():
        if explicit:
            raise ConfigError(_("config file not found"), path=str(p))
        return Config(path=str(p), exists=False)
    try:
        # utf-8-sig: editors on Windows save a BOM, which TOML would report as a syntax error
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(_("cannot read: {error}").format(error=exc), path=str(p)) from None
    try:
        data = tomllib.loads(text)
    except RecursionError:  # tomllib parses nested arrays and tables by recursion
        raise ConfigError(_("TOML nested too deeply to read"), path=str(p)) from None
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(
            _("TOML syntax error: {error}").format(error=msg),
            path=str(p),
            line=int(m.group(1)) if m else None,
        ) from None
    ld = _Loader(str(p), text)
    # every table checked, each problem reported: an operator fixing a config should not learn
    # of the next mistake only after fixing the first
    problems: list[ConfigError] = [
        ld.error(
            k,
            _("unknown top-level key {key} (known: {known})").format(
                key=repr(k), known=", ".join(sorted(_TOP))
            ),
        )
        for k in data
        if k not in _TOP
    ]

    def kept(build: Callable[..., Any], *args: Any, default: Any = None) -> Any:
        """``build(*args)``; its ConfigError joins ``problems`` and ``default`` stands in."""
        try:
            return build(*args)
        except ConfigError as exc:
            problems.append(exc)
            return default

    clusters: dict[str, ClusterConfig] = {}
    for name, raw in kept(_table, ld, data, "clusters", default={}).items():
        if (cluster := kept(_cluster, ld, name, raw)) is not None:
            clusters[name] = cluster
    modelarts: dict[str, ModelArtsConfig] = {}
    for name, raw in kept(_table, ld, data, "modelarts", default={}).items():
        if (project := kept(_modelarts, ld, name, raw)) is not None:
            modelarts[name] = project
    ui = kept(_ui, ld, data, default=UiConfig())
    alerts = dict(kept(_table, ld, data, "alerts", default={}))
    store = kept(_store, ld, data, default=StoreConfig())
    web = kept(_web, ld, data, default=WebConfig())
    risk = kept(_risk, ld, data, default=RiskSettings())
    problems = [e for p in problems for e in getattr(p, "errors", [p])]  # one line each
    if problems:
        raise problems[0] if len(problems) == 1 else ConfigErrors(problems)
    return Config(
        path=str(p),
        clusters=clusters,
        modelarts=modelarts,
        ui=ui,
        alerts=alerts,
        store=store,
        web=web,
        risk=risk,
    )
