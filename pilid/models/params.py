"""Hyper-parameter checks: scikit-learn's `_parameter_constraints`, raised as `ParamError`.

Every estimator of pilid declares its valid values in `_parameter_constraints` (a
subclass extends its parent's dict), in scikit-learn's vocabulary (`Interval`, `StrOptions`,
"boolean", "random_state", ...) plus the few rules below that scikit-learn has no word for
(`Whole`, `Number`, `Choice`, `Satisfies`). PiLiD's (and the shared training settings') are
read from their declarations in `pilid.hyperparameters` by `sklearn_constraints`, which turns
that module's plain words (`Integers`, `Reals`, `OneOf`, a named `Rule`) into these.
`validate_params(estimator)` runs scikit-learn's
check and re-raises its error as `ParamError(key, value, hint)`: a `PilidError` (so also a
`ValueError`) and an `InvalidParameterError`, whose message is one line for Python users
(``lam=-1 is invalid; must be a float in the range [0.0, inf)``) and which carries the key, the
bad value and the hint, so that `pilid.experiments.model_config.check_model` can restate it in the
command line's syntax (``model.lam=-1 is invalid for pilid: ...; fix it, e.g. model.lam=1e-05``).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, InvalidParameterError, Options, StrOptions

from pilid import hyperparameters as hp
from pilid.errors import PilidError

__all__ = [
    "Choice",
    "Number",
    "ParamError",
    "Satisfies",
    "Whole",
    "is_whole",
    "one_line",
    "sklearn_constraints",
    "validate_params",
]


class ParamError(PilidError, InvalidParameterError):
    """A bad hyper-parameter `key` of value `value`; `hint` says what a valid value is."""

    def __init__(self, key: str, value: Any, hint: str, message: str | None = None):
        self.key = key
        self.value = value
        self.hint = hint
        self.message = message
        super().__init__(message or f"{key}={value!r} is invalid; {hint}")

    def __reduce__(self):  # picklable across worker processes despite the extra arguments
        """Pickle with all four arguments (for worker processes)."""
        return type(self), (self.key, self.value, self.hint, self.message)

    def renamed(self, key: str) -> ParamError:
        """The same error for the parameter called `key` (e.g. a student's key inside GA)."""
        message = None if self.message is None else self.message.replace(self.key, key, 1)
        return ParamError(key, self.value, self.hint, message)


def is_whole(value: Any, integral_float: bool = False) -> bool:
    """True for an integer (not a bool); with `integral_float`, also a float such as 8.0."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return integral_float and isinstance(value, numbers.Real) and float(value).is_integer()


class Whole(Interval):
    """A whole number in an interval: `Interval(Integral, ...)` that refuses bools (True is no
    epoch count); `integral_float=True` also takes floats such as 100.0 (as pygam/EBM do)."""

    def __init__(self, left, right=None, *, closed="left", integral_float=False):
        super().__init__(numbers.Integral, left, right, closed=closed)
        self.integral_float = integral_float

    def is_satisfied_by(self, val):
        """Whether ``val`` is a whole number (not a bool) in the interval."""
        return is_whole(val, self.integral_float) and val in self

    def __str__(self):
        """The constraint as scikit-learn's messages name it."""
        text = super().__str__()
        return text.replace("an int", "a whole number", 1) if self.integral_float else text


class Number(Interval):
    """A real number in an interval: `Interval(Real, ...)` that refuses bools. An interval open
    at infinity refuses inf as well (scikit-learn compares with inf)."""

    def __init__(self, left, right=None, *, closed):
        super().__init__(numbers.Real, left, right, closed=closed)

    def is_satisfied_by(self, val):
        """Whether ``val`` is a real number (not a bool) in the interval."""
        return not isinstance(val, bool | np.bool_) and super().is_satisfied_by(val)


class Choice(StrOptions):
    """`StrOptions` that lists its strings in the given order (a set would shuffle them)."""

    def __init__(self, options):
        super().__init__(set(options))
        self.order = tuple(options)

    def __str__(self):
        """``a str among {...}`` in the given order."""
        return "a str among {" + ", ".join(repr(o) for o in self.order) + "}"


class Satisfies(Options):
    """A rule scikit-learn has no constraint for: `predicate(value)` decides, `description`
    (e.g. "a non-empty list of whole numbers >= 1") ends the message. (An `Options` subclass
    because scikit-learn's `make_constraint` accepts only its own constraint classes.)"""

    def __init__(self, predicate: Callable[[Any], bool], description: str):
        super().__init__(object, set())
        self.predicate = predicate
        self.description = description

    def is_satisfied_by(self, val):
        """Whether ``predicate(val)`` holds (an error counts as no)."""
        try:
            return bool(self.predicate(val))
        except (TypeError, ValueError, OverflowError):
            return False

    def __str__(self):
        """The description."""
        return self.description


def _constraint(rule: Any, rules: Mapping[str, list]) -> list:
    """One constraint of `pilid.hyperparameters` as scikit-learn's (a list of its objects)."""
    if isinstance(rule, hp.Integers):
        return [Whole(rule.low, rule.high, closed=rule.closed)]
    if isinstance(rule, hp.Reals):
        return [Number(rule.low, rule.high, closed=rule.closed)]
    if isinstance(rule, hp.OneOf):
        return [Choice(rule.options)]
    if isinstance(rule, hp.Rule):
        return list(rules[rule.name])
    return [rule]  # None, a type, or one of scikit-learn's words ("boolean", ...)


def sklearn_constraints(
    table: Iterable[hp.Hyperparameter], rules: Mapping[str, list] | None = None
) -> dict[str, Any]:
    """`_parameter_constraints` of the entries of a `pilid.hyperparameters` table: each
    `Integers` a `Whole`, each `Reals` a `Number`, each `OneOf` a `Choice`, each `Rule` the
    constraints `rules` holds under its name, anything else as it is (``"no_validation"`` alone:
    not checked)."""
    out = {}
    for entry in table:
        if entry.constraint == ("no_validation",):
            out[entry.name] = "no_validation"
            continue
        out[entry.name] = [c for rule in entry.constraint for c in _constraint(rule, rules or {})]
    return out


_SKLEARN_MESSAGE = re.compile(
    r"The '(\w+)' parameter of \w+ (must be .+?)\. Got .* instead\.?$", re.S
)


def one_line(text: str) -> str:
    """`text` on one line, without a final full stop."""
    return " ".join(str(text).split()).rstrip(".")


def validate_params(estimator) -> None:
    """Check `estimator`'s hyper-parameters against its `_parameter_constraints` (scikit-learn's
    `_validate_params`); the first bad one raises `ParamError` whose hint is the constraint."""
    try:
        estimator._validate_params()
    except ParamError:
        raise
    except InvalidParameterError as error:
        text = one_line(str(error))
        match = _SKLEARN_MESSAGE.match(text)
        if match is None:
            raise PilidError(f"{type(estimator).__name__}: {text}") from None
        key = match.group(1)
        value = estimator.get_params(deep=False).get(key)
        raise ParamError(key, value, match.group(2)) from None


#: joblib's process count (`n_jobs` of EBM, of GridSearchCV): -1 (all cores), -2 (all but one),
#: ... or a whole number >= 1; 0 is no count.
N_JOBS = [Whole(None, -1, closed="right"), Whole(1)]
