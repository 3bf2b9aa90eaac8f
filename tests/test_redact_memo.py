"""redact_repeated() keeps each short string's answer (the store re-encodes hundreds of findings
a poll whose strings are mostly last poll's): the answer is redact()'s whether it comes from
the memo or not, and the memo forgets strings that are no longer looked up."""

from __future__ import annotations

import cockpit.safety as safety
from cockpit.safety import REDACTED, redact, redact_repeated

SECRET = "export HUAWEICLOUD_SDK_SK=Zx9Kq2Lm8Np4Rs6Tv1Wy3Ab5Cd7Ef0Gh2Ij4Kl"


def test_a_secret_is_redacted_each_time_the_same_text_comes_back() -> None:
    first = redact_repeated(SECRET)
    assert "Zx9Kq2Lm8Np4" not in first and REDACTED in first and first == redact(SECRET)
    for i in range(60_000):  # many other strings in between: the memo turns its generations
        redact_repeated({"title": f"job {i} pending while {i} later jobs started"})
        assert redact_repeated(SECRET) == first


def test_strings_no_longer_looked_up_are_forgotten() -> None:
    for i in range(200_000):  # a stream of strings that never come back
        redact_repeated(f"starved: 64 CPUs pending {i}h")
    kept = len(safety._MEMO) + len(safety._OLD)
    assert kept < 100_000  # not every string ever redacted
    assert redact_repeated("starved: 64 CPUs pending 5h") == "starved: 64 CPUs pending 5h"
