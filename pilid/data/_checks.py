"""Option checks shared by the loaders: each bad value fails with one line and the fix."""

from __future__ import annotations

import math
import numbers

from pilid.errors import PilidError


def whole(name: str, value, minimum: int = 0, hint: str = "") -> int:
    """``value`` as an int >= ``minimum`` (bools and fractions rejected)."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if isinstance(value, float) and value.is_integer():
        ok, value = True, int(value)
    if not ok or value < minimum:
        raise PilidError(
            f"{name}={value!r} is invalid; use a whole number >= {minimum}{hint and ' ' + hint}"
        )
    return int(value)


def real(name: str, value, low: float, high: float = math.inf, hint: str = "") -> float:
    """``value`` as a finite float in [low, high] (or [low, inf))."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or not low <= float(value) <= high:
        bounds = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
        raise PilidError(f"{name}={value!r} is invalid; use a number {bounds}{hint and ' ' + hint}")
    return float(value)


def flag(name: str, value) -> bool:
    """``value`` as a bool (only true/false accepted)."""
    if not isinstance(value, bool):
        raise PilidError(f"{name}={value!r} is invalid; use true or false")
    return value


def choice(name: str, value, options: tuple[str, ...]) -> str:
    if value not in options:
        raise PilidError(f"{name}={value!r} is invalid; use one of {', '.join(options)}")
    return value
