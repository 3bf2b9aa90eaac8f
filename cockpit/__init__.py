"""Cockpit: a terminal cockpit for on-call operators of Slurm and ModelArts training jobs."""

__version__ = "0.1.0"
