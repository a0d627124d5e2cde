"""The exceptions deniable raises on purpose.

Every one derives from :class:`DeniableError`, so ``except DeniableError``
catches what the library raises about your input (and nothing else). Those
that reject a bad value are also ``ValueError``, as they were before this
hierarchy existed, so existing ``except ValueError`` code keeps working.
Plain ``ValueError`` / ``TypeError`` remain for bad parameters (the message
names the parameter, the value received and what is allowed).
"""

from __future__ import annotations

__all__ = [
    "DeniableError",
    "BudgetError",
    "ConfigError",
    "ReportError",
    "CategoryError",
    "AggregateError",
    "StateError",
]


class DeniableError(Exception):
    """Base of every exception deniable raises on purpose."""


class BudgetError(DeniableError, ValueError):
    """A release that would take a privacy budget above its total."""


class ConfigError(DeniableError, ValueError):
    """A mechanism configuration (``from_config``) that this reader cannot accept."""


class ReportError(DeniableError, ValueError):
    """A report that its mechanism could not have produced.

    ``index`` is the position of the first bad report in the batch and
    ``reason`` what is wrong with it alone (phrased for that one report), so
    that the server and the command line can name the field or row.
    """

    def __init__(self, message: str, index: int = 0, reason: str | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.reason = message if reason is None else reason


class CategoryError(DeniableError, ValueError):
    """A true value that is not one of a frequency oracle's categories.

    ``value`` is the value; ``index`` is its position among the values passed
    to ``privatize_many`` (None for a single ``privatize``), so that the
    command line can name the row.
    """

    def __init__(self, message: str, value: object, index: int | None = None) -> None:
        super().__init__(message)
        self.value = value
        self.index = index


class AggregateError(DeniableError, ValueError):
    """Aggregates of different mechanism configurations, or a malformed aggregate."""


class StateError(DeniableError, ValueError):
    """A device's kept state (:mod:`deniable.client_state`) that cannot be used: written for
    another mechanism configuration, malformed, unreadable, or readable by other users."""
