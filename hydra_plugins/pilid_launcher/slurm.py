"""pilid's Slurm launcher: hydra-submitit-launcher's ``SlurmLauncher`` that fails in one line.

Selected by ``conf/hydra/launcher/pilid_slurm.yaml``. Where Slurm's commands are missing (a
laptop, a compute node without the client tools) submitit raised ``Could not detect "srun"``
and, without ``sbatch``, a ``FileNotFoundError``: Hydra printed them as 25-47-line tracebacks.
Here the launcher checks for ``sbatch`` and ``srun`` on ``PATH`` before it submits anything and
stops with one line ``pilid: error: ...`` (exit 2) naming the missing commands and the fix: run
the sweep on the cluster's login node, or on this machine with ``hydra/launcher=pilid_joblib``.
Where ``sbatch`` is there but refuses the submission (no controller to reach, a bad partition),
its own message (which submitit prints) is followed by one pilid line instead of the traceback.
Jobs that fail after they were submitted are reported as before. Without the optional
``hydra-submitit-launcher`` plugin (``pip install -e ".[cluster]"``) this module defines nothing,
so that Hydra's plugin scan stays quiet.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence

try:
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
except ImportError:  # pragma: no cover - the optional plugin is not installed
    SlurmLauncher = None

#: The Slurm commands submitit runs on the submitting machine.
SLURM_COMMANDS = ("sbatch", "srun")
#: What to do instead, in the command line's words.
FIX = (
    "run the sweep on a Slurm login node, or on this machine with hydra/launcher=pilid_joblib "
    "(its cores) or hydra/launcher=pilid_local (Slurm's code path without a cluster)"
)


def missing_commands(commands: Sequence[str] = SLURM_COMMANDS) -> list[str]:
    """The Slurm commands of ``commands`` that are not on ``PATH``."""
    return [command for command in commands if shutil.which(command) is None]


def missing_line(missing: Sequence[str]) -> str:
    """The one line for Slurm commands missing from ``PATH``."""
    return (
        f"pilid: error: hydra/launcher=pilid_slurm needs Slurm's {' and '.join(missing)}, "
        f"which {'is' if len(missing) == 1 else 'are'} not on PATH (this is not a Slurm login "
        f"node); nothing was submitted; {FIX}"
    )


def refused_by_sbatch(error: BaseException) -> bool:
    """Whether ``error`` is submitit's ``FailedJobError`` for an ``sbatch`` that exited with an
    error (raised while submitting, never by a job that ran)."""
    cause = error.__cause__
    return (
        type(error).__name__ == "FailedJobError"
        and isinstance(cause, subprocess.CalledProcessError)
        and bool(cause.cmd)
        and str(cause.cmd[0]).rsplit("/", 1)[-1] == "sbatch"
    )


if SlurmLauncher is not None:

    class PilidSlurmLauncher(SlurmLauncher):
        """``SlurmLauncher`` that stops with one line where Slurm cannot take the sweep."""

        def launch(self, job_overrides, initial_job_idx):
            """Submit the jobs as ``SlurmLauncher`` does, after checking that ``sbatch`` and
            ``srun`` are on ``PATH``; one line and exit 2 where they are not, or where
            ``sbatch`` refuses the submission."""
            missing = missing_commands()
            if missing:
                print(missing_line(missing), file=sys.stderr, flush=True)
                sys.exit(2)
            try:
                return super().launch(job_overrides, initial_job_idx)
            except Exception as error:
                if not refused_by_sbatch(error):
                    raise
                code = error.__cause__.returncode
                print(
                    f"pilid: error: sbatch refused the sweep (exit {code}; its message is "
                    f"above); nothing was submitted; check the cluster (sinfo) and "
                    f"hydra.launcher.partition, or {FIX}",
                    file=sys.stderr,
                    flush=True,
                )
                sys.exit(2)
