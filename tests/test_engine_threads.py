"""The hub diagnoses two sources in two threads at once: both must see every rule."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import threading
from cockpit.diagnosis import engine
barrier = threading.Barrier(2)
seen = {}
def run(kind):
    barrier.wait()
    seen[kind] = len(engine.rules_for(kind))
threads = [threading.Thread(target=run, args=(k,)) for k in ("job", "training_job")]
[t.start() for t in threads]
[t.join() for t in threads]
# what each thread saw vs. the full registry once loading is surely over
print(seen["job"], seen["training_job"],
      len(engine.rules_for("job")), len(engine.rules_for("training_job")))
"""


def test_first_diagnoses_in_two_threads_both_get_all_rules():
    # a fresh interpreter: the rule modules are imported by whichever thread comes first
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
        ).stdout
        jobs, training, all_jobs, all_training = map(int, out.split())
        assert (jobs, training) == (all_jobs, all_training), out
