"""The exceptions and warnings deniable raises on purpose.

Every exception derives from :class:`DeniableError`, so ``except
DeniableError`` catches what the library raises about your input (and
nothing else). Those that reject a bad value are also ``ValueError``, as
they were before this hierarchy existed, so existing ``except ValueError``
code keeps working. Plain ``ValueError`` / ``TypeError`` remain for bad
parameters (the message names the parameter, the value received and what is
allowed). Every warning derives from :class:`DeniableWarning` (a
``UserWarning``), so ``warnings.simplefilter("error", DeniableWarning)``
turns all of them into errors.

The tree (``x ValueError``: also a ``ValueError``; the classes marked
*extra* live in the package of an optional part, which the core never
imports, and are re-exported nowhere else)::

    DeniableError
    ├── BudgetError x ValueError ........ a release above a privacy budget
    ├── ConfigError x ValueError ........ a mechanism configuration that cannot be read
    ├── ReportError x ValueError ........ a report its mechanism could not have produced
    │   └── FieldReportError ............ ... whose fault is a field inside it
    ├── CategoryError x ValueError ...... a true value that is not a category
    ├── AggregateError x ValueError ..... aggregates of different configurations, or malformed
    ├── StateError x ValueError ......... a device's kept state that cannot be used
    ├── SeparationError x ValueError .... a survey fit whose maximum-likelihood estimate does not exist
    ├── SurveyError x ValueError ........ a survey definition (extra: deniable.server)
    ├── StorageError .................... a request the collection service refuses (extra: deniable.server)
    │   ├── NotFound
    │   ├── Conflict
    │   ├── Forbidden
    │   └── Invalid
    ├── PortInUseError x OSError ........ the server's port is taken (extra: deniable.server)
    ├── OHTTPError x ValueError ......... an Oblivious HTTP message that cannot be opened (extra: ohttp)
    │   └── UnknownKey .................. ... sealed to a key the gateway does not hold
    ├── BHTTPError x ValueError ......... a malformed Binary HTTP message (extra: ohttp)
    ├── ClientError ..................... the server refused a device's request (extra: deniable.client)
    │   ├── AlreadyAnsweredError
    │   └── BudgetSpentError
    └── CLIError ........................ a command-line error, one line on stderr (extra: deniable.cli)

    DeniableWarning (a UserWarning)
    ├── ConvergenceWarning .............. an iterative fit stopped before its tolerance
    └── PowerApproximationWarning ....... a planned power outside its normal approximation's range
"""

from __future__ import annotations

__all__ = [
    "DeniableError",
    "BudgetError",
    "ConfigError",
    "ReportError",
    "FieldReportError",
    "CategoryError",
    "AggregateError",
    "StateError",
    "SeparationError",
    "DeniableWarning",
    "ConvergenceWarning",
    "PowerApproximationWarning",
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


class FieldReportError(ReportError):
    """A bad report whose fault is a field inside it: ``subfield`` (e.g. ``.group``, ``.level``)
    is appended to the report's path when the server names it."""

    def __init__(self, message: str, index: int, subfield: str, reason: str | None = None) -> None:
        super().__init__(message, index, reason)
        self.subfield = subfield


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
    """A device's kept state (:mod:`deniable._client_state`) that cannot be used: written for
    another mechanism configuration, malformed, unreadable, or readable by other users."""


class SeparationError(DeniableError, ValueError):
    """The maximum-likelihood estimate of a survey fit does not exist: a coefficient diverges or
    the information is singular (:mod:`deniable.survey`)."""


class DeniableWarning(UserWarning):
    """Base of every warning deniable issues."""


class ConvergenceWarning(DeniableWarning):
    """The iterative Bayesian update (:func:`deniable._mle.fit`) stopped at ``max_iter`` before reaching ``tol``."""


class PowerApproximationWarning(DeniableWarning):
    """A power or sample size from the normal approximation where it may be off by more than 0.06.

    Raised by :func:`deniable.survey.prevalence_power` and
    :func:`~deniable.survey.prevalence_sample_size` under 100 respondents or
    when a parameter's expected estimate lies within two standard errors of 0
    or 1 (see :mod:`deniable.survey`'s power functions);
    :func:`~deniable.survey.simulated_power` gives the real test's power there.
    """
