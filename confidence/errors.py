"""Exceptions raised at the public boundary of extractconf.

Every error names the thing that failed (a file, a dataset line, a model directory) and the
reason, so a batch job can log one line per failure and carry on with the rest.
"""

from __future__ import annotations

from pathlib import Path


class ExtractConfError(Exception):
    """Base class of every error extractconf raises on purpose."""


class DocumentError(ExtractConfError):
    """A document could not be read.

    Parameters
    ----------
    path : str or Path
        The file that failed.
    reason : str
        Why, in words a user can act on.

    Examples
    --------
    >>> str(DocumentError("scan.png", "file is empty"))
    'scan.png: file is empty'
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self):  # keep the two arguments across process boundaries
        return (type(self), (self.path, self.reason))


class DatasetError(ExtractConfError):
    """A dataset folder, label line or schema is malformed."""


class LLMError(ExtractConfError):
    """An LLM call failed after retries, or its reply could not be used."""


class ModelError(ExtractConfError):
    """A saved confidence model is missing, corrupt or from an incompatible version."""
