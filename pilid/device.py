"""Device resolution: `auto` means CUDA when present, else CPU."""

from __future__ import annotations

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
