"""Device resolution (`auto` means CUDA when present, else CPU) and the CPU threads of a fit."""

from __future__ import annotations

import os
import time

import torch

from pilid.errors import PilidError


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """Return the torch device for a config value (`auto`, `cpu`, `cuda`, `cuda:1`, ...)."""
    if isinstance(device, torch.device):
        return device
    name = "auto" if device is None else str(device).strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise PilidError(
                f"device={device!r} asked for CUDA but none is available; use device=auto or cpu"
            )
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise PilidError(
                f"device={device!r}: only {torch.cuda.device_count()} CUDA device(s) present"
            )
        return dev
    if name in ("cpu", "mps"):
        return torch.device(name)
    raise PilidError(f"unknown device {device!r}; use auto, cpu, cuda or cuda:<index>")


def busy_cores(seconds: float = 0.05) -> float | None:
    """Cores kept busy by other processes right now: the machine's share of non-idle CPU time
    over `seconds` (``/proc/stat``, Linux) times its cores, read while this process sleeps;
    None where it cannot be read."""

    def read() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:9]]
        return values[3] + values[4], sum(values)  # idle + iowait, all

    try:
        idle0, total0 = read()
        time.sleep(seconds)
        idle1, total1 = read()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    return (1.0 - (idle1 - idle0) / (total1 - total0)) * (os.cpu_count() or 1)


def cpu_threads() -> int:
    """Torch threads for a fit on the CPU: those torch would use (``torch.get_num_threads()``:
    the user's setting, else the cores), less the cores other processes keep busy now
    (`busy_cores`). A training step waits for its slowest thread, so a thread that shares a
    core with a busy process slows every step; on the cores left free the fit runs at their
    speed instead. At least one."""
    threads = torch.get_num_threads()
    if threads <= 1:
        return 1
    busy = busy_cores()
    if busy is None:
        return threads
    free = (os.cpu_count() or threads) - int(round(busy))
    return max(1, min(threads, free))
