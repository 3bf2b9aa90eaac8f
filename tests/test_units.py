"""Slurm time notations printed the way Slurm prints them."""

from cockpit.units import hms, squeue_time


def test_hms_is_what_time_flags_take():
    assert hms(90061) == "1-01:01:01"
    assert hms(59) == "00:00:59"
    assert hms(None) == "UNLIMITED" and hms(None, "?") == "?"


def test_squeue_time_drops_hours_under_an_hour():
    assert squeue_time(59) == "0:59"
    assert squeue_time(3600) == "1:00:00"
    assert squeue_time(86400 + 3723) == "1-01:02:03"
    assert squeue_time(None, "-") == "-" and squeue_time(-5) == "UNLIMITED"
