"""The progress bar of a setting's trials."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def progress(total: int, label: str, verbose: bool):
    """A tqdm bar over trials on stderr; off when stderr is not a terminal unless verbose."""
    from tqdm.auto import tqdm

    desc = label
    with contextlib.suppress(Exception):
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized() and HydraConfig.get().mode.name == "MULTIRUN":
            desc = f"#{HydraConfig.get().job.num} {label}"
    disable = not (verbose or sys.stderr.isatty())
    bar = tqdm(total=total, desc=desc, unit="trial", file=sys.stderr, disable=disable)
    try:
        yield bar
    finally:
        bar.close()
