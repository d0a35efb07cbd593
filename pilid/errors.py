"""One exception type for every bad input the user can fix; its message is a single line."""


class PilidError(ValueError):
    """Bad input: the message names the problem and the fix, on one line."""


class DataFileError(PilidError, FileNotFoundError):
    """A data file is missing, truncated or fails its checksum."""


class TrainingDivergedError(PilidError):
    """Training diverged: the training loss became NaN or inf, or the trained model fits its
    training rows far worse than a constant prediction (`pilid.train.divergence`); the message
    names the trial and the learning rate to try."""


class TrainingDivergedWarning(UserWarning):
    """Training diverged: a candidate of a search was dropped (`PiLiDRegressorCV`), or trials
    were trained again with the additive part's steps scaled by its pieces (`fit_batched`)."""
