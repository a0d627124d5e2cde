"""Requests the collection service refuses, each naming the field at fault.

The classes say *why* a request is refused; the HTTP status each one
answers with is the app's business (:mod:`deniable.server._app`), so the
storage and the command line use them without HTTP in mind.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from deniable.errors import DeniableError

__all__ = ["StorageError", "NotFound", "Conflict", "Forbidden", "Invalid", "SurveyError", "is_text", "printable",
           "closest", "did_you_mean"]


def is_text(value: str) -> bool:
    """Whether ``value`` is valid Unicode text (encodes as UTF-8: no lone surrogate such as ``"\\ud800"``).

    JSON can carry a lone surrogate (``"\\ud800"``), which no database or
    UTF-8 answer can hold.
    """
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def printable(name: str) -> str:
    """``name`` as it can appear in a field path or message: lone surrogates as ``\\udXXX`` escapes."""
    return name if is_text(name) else name.encode("utf-8", "backslashreplace").decode()


class StorageError(DeniableError):
    """A request the storage refuses; ``field`` is the JSON path of the cause."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class NotFound(StorageError):
    """No survey with the requested id."""


class Conflict(StorageError):
    """The request contradicts what is stored (a reused key, a closed survey, another survey's id)."""


class Forbidden(StorageError):
    """An invite-only survey without a valid, unused invite token."""


class Invalid(StorageError):
    """A malformed request: a bad key, a missing answer, a report its mechanism could not make."""


class SurveyError(DeniableError, ValueError):
    """A survey definition that cannot be accepted; ``field`` is the JSON path of the problem."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def closest(key: str, names: Iterable[Any]) -> str | None:
    """The name among ``names`` that ``key`` most likely misspells (:func:`difflib.get_close_matches`), or None."""
    close = difflib.get_close_matches(key, [n for n in names if isinstance(n, str) and n != key], n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(key: str, known: Iterable[Any]) -> str:
    """``"; did you mean 'mechanism'?"`` for the known name closest to a misspelt ``key``, or ``""``."""
    name = closest(key, known)
    return f"; did you mean {name!r}?" if name else ""
