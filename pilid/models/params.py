"""Hyper-parameter errors that know their parameter: `ParamError` and small value checks.

Every estimator check raises `ParamError(key, value, hint)`, a `PilidError` whose message is the
usual one line for Python users (``lam=-1 is invalid; use a number >= 0 such as 1e-5``) and which
also carries the constructor key, the bad value and the hint, so that
`pilid.models.registry.check_model_params` can restate it in the command line's syntax
(``model.lam=-1 is invalid for pilid: ...``).
"""

from __future__ import annotations

import numbers
from typing import Any

from pilid.errors import PilidError


class ParamError(PilidError):
    """A bad hyper-parameter `key` of value `value`; `hint` says what a valid value is."""

    def __init__(self, key: str, value: Any, hint: str, message: str | None = None):
        self.key = key
        self.value = value
        self.hint = hint
        self.message = message
        super().__init__(message or f"{key}={value!r} is invalid; {hint}")

    def __reduce__(self):  # picklable across worker processes despite the extra arguments
        return type(self), (self.key, self.value, self.hint, self.message)

    def renamed(self, key: str) -> ParamError:
        """The same error for the parameter called `key` (e.g. a student's key inside GA)."""
        message = None if self.message is None else self.message.replace(self.key, key, 1)
        return ParamError(key, self.value, self.hint, message)


def is_whole(value: Any, integral_float: bool = False) -> bool:
    """True for an integer (not a bool); with `integral_float`, also a float such as 8.0."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return integral_float and isinstance(value, numbers.Real) and float(value).is_integer()


def is_real(value: Any) -> bool:
    """True for a finite or infinite real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_whole(key: str, value: Any, low: int, integral_float: bool = False) -> None:
    """Raise `ParamError` unless `value` is a whole number >= `low`."""
    if not (is_whole(value, integral_float) and value >= low):
        raise ParamError(key, value, f"use a whole number >= {low}")


def check_bool(key: str, value: Any) -> None:
    """Raise `ParamError` unless `value` is True or False."""
    import numpy as np

    if not isinstance(value, bool | np.bool_):
        raise ParamError(key, value, "use true or false")
