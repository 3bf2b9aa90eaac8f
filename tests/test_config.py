import sys

import pytest

from cockpit.config import load_config
from cockpit.errors import ConfigError
from tests.cli_support import run_cockpit

EXAMPLE = """\
[clusters.lab]
transport = "ssh"            # or "local"
host = "127.0.0.1"
port = 2222
user = "root"
key = "~/.ssh/id_ed25519"
known_hosts = "~/.ssh/known_hosts"
interval = 15                # seconds

[modelarts.prod]
region = "cn-north-4"
endpoint = "http://127.0.0.1:8443"   # optional; overrides the region's endpoint
project_id = "0b1e8c5d2f9a4c6e8d7f0a1b2c3d4e5f"
ak_env = "HUAWEICLOUD_SDK_AK"         # names of the environment variables holding the keys
sk_env = "HUAWEICLOUD_SDK_SK"
interval = 30
"""


def write(tmp_path, text):
    p = tmp_path / "config.toml"
    p.write_text(text)
    return p


def test_example_config(tmp_path):
    cfg = load_config(
        write(tmp_path, EXAMPLE + '\n[clusters.here]\ntransport = "local"\n[ui]\nbell = false\n')
    )
    lab = cfg.clusters["lab"]
    assert (lab.transport, lab.host, lab.port, lab.user, lab.interval) == (
        "ssh",
        "127.0.0.1",
        2222,
        "root",
        15.0,
    )
    assert lab.known_hosts == "~/.ssh/known_hosts" and lab.ssh_config and not lab.allow_actions
    assert cfg.clusters["here"].transport == "local" and cfg.clusters["here"].interval == 15.0
    prod = cfg.modelarts["prod"]
    assert (prod.region, prod.project_id, prod.ak_env, prod.interval) == (
        "cn-north-4",
        "0b1e8c5d2f9a4c6e8d7f0a1b2c3d4e5f",
        "HUAWEICLOUD_SDK_AK",
        30.0,
    )
    assert cfg.ui.bell is False and cfg.has_sources


def test_missing_default_file_gives_empty_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nowhere"))
    cfg = load_config(None)
    assert not cfg.has_sources and not cfg.exists


def test_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("mutation", "line", "key", "words"),
    [
        (("interval = 15 ", "interval = 2  "), 8, "clusters.lab.interval", "floor"),
        (("port = 2222", 'port = "2222"'), 4, "clusters.lab.port", "integer"),
        (('user = "root"', 'usr = "root"'), 5, "clusters.lab.usr", "unknown key"),
        (('transport = "ssh"', 'transport = "telnet"'), 2, "clusters.lab.transport", "local"),
        (
            ('project_id = "0b1e8c5d2f9a4c6e8d7f0a1b2c3d4e5f"\n', ""),
            10,
            "modelarts.prod.project_id",
            "required",
        ),
        (("interval = 30", "interval = 1"), 16, "modelarts.prod.interval", "floor"),
    ],
)
def test_errors_name_file_line_and_key(tmp_path, mutation, line, key, words):
    p = write(tmp_path, EXAMPLE.replace(*mutation))
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    err = ei.value
    assert err.key == key and err.line == line and words in str(err)
    assert str(err).startswith(f"{p}:{line}: [{key}]")


def test_toml_syntax_error_has_line(tmp_path):
    p = write(tmp_path, EXAMPLE.replace('host = "127.0.0.1"', "host = 127.0.0.1 oops"))
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    assert ei.value.line == 3 and "TOML syntax error" in str(ei.value)


def test_known_hosts_none_needs_explicit_insecure(tmp_path):
    p = write(
        tmp_path, EXAMPLE.replace('known_hosts = "~/.ssh/known_hosts"', 'known_hosts = "none"')
    )
    with pytest.raises(ConfigError, match="insecure_ignore_host_key"):
        load_config(p)
    p = write(
        tmp_path,
        EXAMPLE.replace(
            'known_hosts = "~/.ssh/known_hosts"',
            'known_hosts = "none"\ninsecure_ignore_host_key = true',
        ),
    )
    assert load_config(p).clusters["lab"].known_hosts is None


def test_check_config_cli_exit_2_one_line(tmp_path):
    p = write(tmp_path, EXAMPLE.replace("interval = 15 ", "interval = 1  "))
    res = run_cockpit("check-config", "--config", str(p))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert f"{p}:8" in res.stderr and "clusters.lab.interval" in res.stderr


def test_utf8_bom_is_accepted(tmp_path):
    """A config saved by a Windows editor starts with a BOM: it loads; errors keep their lines."""
    p = tmp_path / "config.toml"
    p.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.encode())
    assert load_config(p).clusters["lab"].port == 2222
    p.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.replace("port = 2222", 'port = "x"').encode())
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    assert exc.value.line == 4 and "port" in str(exc.value)


def test_check_config_reports_unset_modelarts_keys_and_still_checks_the_cluster(tmp_path):
    """Unset AK/SK variables: one FAILS line for that project, not an abort before the clusters."""
    import os

    empty = tmp_path / "bin"
    empty.mkdir()  # no squeue on PATH: the cluster is checked and fails for its own reason
    p = write(
        tmp_path,
        '[clusters.here]\ntransport = "local"\n\n'
        '[modelarts.prod]\nregion = "cn-north-4"\nproject_id = '
        '"p1"\nak_env = "NO_SUCH_AK"\nsk_env = "NO_SUCH_SK"\n',
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NO_SUCH_AK", "NO_SUCH_SK")}
    env["PATH"] = f"{empty}{os.pathsep}{os.path.dirname(sys.executable)}"
    res = run_cockpit("check-config", "--config", str(p), "--timeout", "10", env=env)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    out = res.stdout.splitlines()
    prod = next(ln for ln in out if "modelarts prod" in ln)
    here = next(ln for ln in out if "cluster here" in ln)
    assert "FAILS [config]" in prod and "NO_SUCH_AK" in prod
    assert "FAILS" in here and "[config]" not in here  # polled, failed on its own (no squeue)


def test_every_table_with_a_problem_is_reported_at_once(tmp_path):
    # an operator fixing a config learned of the next mistake only after fixing the first
    p = tmp_path / "c.toml"
    p.write_text(
        '[clusters.a]\nhost = "h"\npoll_interval = 5\n\n'
        '[clusters.b]\ntransport = "carrier-pigeon"\n\n'
        '[modelarts.p]\nregion = "cn-north-4"\n\n'
        "[store]\nretention_days = 0\n"
    )
    with pytest.raises(ConfigError) as err:
        load_config(p)
    text = str(err.value)
    assert text.startswith("4 problems:")
    for where, words in (
        (":3: [clusters.a.poll_interval]", "unknown key"),
        (":6: [clusters.b.transport]", "carrier-pigeon"),
        ("[modelarts.p.project_id]", "project_id is required"),
        ("[store.retention_days]", "between 0 and 3650"),
    ):
        line = next(ln for ln in text.splitlines() if where in ln)
        assert words in line
    # the CLI prints them all and exits 2, no traceback
    out = run_cockpit("--config", str(p), "check-config")
    assert out.returncode == 2
    assert "carrier-pigeon" in out.stderr and "poll_interval" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_host_without_a_transport_is_an_ssh_cluster(tmp_path):
    # transport defaulted to local: check-config said the cluster answered (the local Slurm)
    p = tmp_path / "c.toml"
    p.write_text('[clusters.q]\nhost = "login01"\n')
    assert load_config(p).clusters["q"].transport == "ssh"
    p.write_text('[clusters.q]\ntransport = "local"\n')
    assert load_config(p).clusters["q"].transport == "local"


def test_every_bad_key_of_one_table_is_named_at_once(tmp_path):
    """Two typos in one [clusters.X] table named only the first: fix, rerun, find the next
    (a new-user trial); each bad key of a table is its own line, with its line number."""
    from cockpit.config import load_config
    from cockpit.errors import ConfigErrors

    p = tmp_path / "config.toml"
    p.write_text(
        '[clusters.hpc]\ntransport = "local"\nslurmctld_logg = "/var/log/x"\n'
        'timzone = "UTC"\ninterval = "x"\n'
    )
    with pytest.raises(ConfigErrors) as err:
        load_config(p)
    lines = str(err.value).splitlines()
    assert lines[0] == "3 problems:"
    assert [ln.split()[0] for ln in lines[1:]] == [f"{p}:3:", f"{p}:4:", f"{p}:5:"]
    assert "[clusters.hpc.timzone] unknown key 'timzone'" in lines[2]
    assert "[clusters.hpc.interval] must be a number" in lines[3]
