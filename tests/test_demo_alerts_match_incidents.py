"""One verdict per subject, on the demo: every critical incident `cockpit incidents --demo`
lists was paged (`cockpit alerts --demo`), with the same severity. The alert history used
to take the demo's first poll as a baseline and list 3 alerts beside 17 critical incidents,
and a resource pool's Abnormal node (a critical incident) reached no channel at all."""

from __future__ import annotations

import json

from cockpit.cli import main


def _subjects_json(capsys, argv: list[str]) -> str:
    assert main(argv) in (0, 1)
    return capsys.readouterr().out


def test_every_critical_demo_incident_has_its_alert(capsys):
    incidents = json.loads(_subjects_json(capsys, ["incidents", "--demo", "--json"]))["incidents"]
    out = _subjects_json(capsys, ["alerts", "--demo", "--json"])
    alerts = [json.loads(line) for line in out.splitlines() if line.strip()]

    def key(subject: dict) -> tuple[str, str, str]:
        return subject["kind"], subject["source"], subject["id"]

    paged = {key(a["subject"]): a["severity"] for a in alerts}
    critical = [i for i in incidents if i["severity"] == "critical"]
    assert len(critical) >= 15  # the demo's story: jobs, nodes, training jobs and a pool
    missing = [
        f"{key(i['subject'])}: {i['title']}" for i in critical if key(i["subject"]) not in paged
    ]
    assert not missing, missing
    assert ("pool", "demo-modelarts", "pool-7f3a9c21") in paged
    for i in critical:
        assert paged[key(i["subject"])] == "critical", i["title"]
