"""Regenerate ``screenshots/*.svg`` from the demo site with a frozen clock.

Usage: ``python scripts/screenshots.py [--out screenshots] [--size 140x40 ...]``; by default
every screen at 80x24 (``<name>-80x24.svg``, the size an operator's tmux pane often is) and at
160x48 (``<name>.svg``). Deterministic: same demo seed, same clock, same pictures (diffs mean
the UI changed).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from cockpit.app import CockpitApp
from cockpit.demo.site import demo_sources
from cockpit.model import Subject
from cockpit.store.acks import AckStore

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)
OOM_JOB = Subject("job", "demo-hpc", "48102")


def frozen() -> datetime:
    return NOW


async def settle(app: CockpitApp, pilot, cond=lambda: True) -> None:
    for _ in range(500):
        await pilot.pause(0.02)
        if cond() and not any(w.is_running for w in app.workers if w.group != "poll"):
            break
    await pilot.pause(0.1)


async def shoot(out: Path, size: tuple[int, int], suffix: str = "") -> list[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        app = CockpitApp(
            demo_sources(7, clock=frozen),
            clock=frozen,
            acks=AckStore(Path(tmp) / "state.json"),
            banner="DEMO SITE (simulated, --demo)",
            bell=False,
        )
        written: list[Path] = []

        def save(name: str) -> None:
            written.append(Path(app.save_screenshot(f"{name}{suffix}.svg", str(out))))

        async with app.run_test(size=size) as pilot:
            await app.hub.first_round.wait()
            await settle(app, pilot)
            save("dashboard")
            app.open_subject(OOM_JOB)
            await settle(app, pilot, lambda: bool(getattr(app.screen, "logs", None)))
            save("job")
            await pilot.press("l")  # stdout, opened at its first red error
            await settle(
                app, pilot, lambda: getattr(app.screen.query_one("#logview"), "_done", False)
            )
            save("log")
            await pilot.press("escape", "escape", "i")
            await settle(app, pilot)
            save("incidents")
            await pilot.press("escape")
            app.open_subject(
                Subject("training_job", "demo-modelarts", "5b1c0a4e-7d21-4f3a-9c11-000000000001")
            )
            await settle(app, pilot, lambda: bool(getattr(app.screen, "logs", None)))
            save("training-job")
            await pilot.press("escape", "F")
            await settle(app, pilot)
            save("fleet")
            await pilot.press("escape")
            app.open_subject(Subject("node", "demo-hpc", "bm01"))  # a node in service
            await settle(app, pilot)
            await pilot.press("a", "enter", *"fan FAN2 failed")
            await settle(app, pilot)
            save("action")
        return written


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "screenshots"))
    p.add_argument(
        "--size", nargs="*", default=["160x48", "80x24"], help="COLSxROWS (the first: no suffix)"
    )
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for n, size in enumerate(args.size):
        cols, rows = (int(x) for x in size.lower().split("x"))
        for path in asyncio.run(shoot(out, (cols, rows), "" if n == 0 else f"-{size}")):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
