"""One exception type for every bad input the user can fix; its message is a single line."""


class PilidError(ValueError):
    """Bad input: the message names the problem and the fix, on one line."""


class DataFileError(PilidError, FileNotFoundError):
    """A data file is missing, truncated or fails its checksum."""
