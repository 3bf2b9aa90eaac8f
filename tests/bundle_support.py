"""One pasted file diagnosed as ``cockpit diagnose FOLDER --json`` reads it (the unseen
batches' kind tests: one realistic line per file)."""

from __future__ import annotations

from pathlib import Path

from cockpit.ingest.bundle import diagnose_bundle


def diagnose_text(tmp_path: Path, name: str, text: str) -> dict:
    (tmp_path / name).write_text(text)
    return diagnose_bundle(str(tmp_path)).to_json()
