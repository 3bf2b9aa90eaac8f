"""A generated Slurm 22.05 site (1k/10k/100k jobs, 10k nodes) behind fake executables.

``generate(directory, jobs=..., nodes=...)`` builds the site with the demo's simulator
(:class:`cockpit.demo.slurm.SlurmCluster`: one formatter for the demo and the
bench), writes the outputs of the exact commands in ``cockpit.slurm.commands``
and puts ``squeue``/``sinfo``/``scontrol``/``sacct`` shell scripts in ``directory/bin``
that print those files and append one line per invocation to ``directory/calls.log``.
"""

from .generate import NOW, Site, count_calls, generate

__all__ = ["NOW", "Site", "count_calls", "generate"]
