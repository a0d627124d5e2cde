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
    """Base of every exception deniable raises on purpose.

    ``except DeniableError`` catches what the library raises about your
    input, and nothing else (not a bug's ``TypeError`` or ``KeyError``).

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> try:
    ...     m.privatize("z")
    ... except dn.DeniableError as exc:
    ...     print(type(exc).__name__, isinstance(exc, ValueError))
    CategoryError True
    """


class BudgetError(DeniableError, ValueError):
    """A release that would take a privacy budget above its total.

    Raised by :meth:`deniable.PrivacyBudget.spend`; the message names the
    spend, the total it would reach and what was already spent.

    Examples
    --------
    >>> import deniable as dn
    >>> budget = dn.PrivacyBudget(1.0)
    >>> budget.spend(0.75, "q1")
    >>> try:
    ...     budget.spend(0.5, "q2")
    ... except dn.BudgetError as exc:
    ...     print(exc)
    privacy budget exceeded: spending epsilon=0.5 for q2 brings the total to 1.25,
    above the budget 1 (already spent: q1=0.75)
    """


class ConfigError(DeniableError, ValueError):
    """A mechanism configuration (``from_config``) that this reader cannot accept.

    The message names the configuration field and what it must be.

    Examples
    --------
    >>> import deniable as dn
    >>> try:
    ...     dn.from_config({"format": "deniable.mechanism", "version": 1, "mechanism": "nope"})
    ... except dn.ConfigError as exc:
    ...     print(str(exc)[:48])
    config field 'mechanism' must be one of ['binary
    """


class ReportError(DeniableError, ValueError):
    """A report that its mechanism could not have produced.

    ``index`` is the position of the first bad report in the batch and
    ``reason`` what is wrong with it alone (phrased for that one report), so
    that the server and the command line can name the field or row.

    Parameters
    ----------
    message : str
        What is wrong with the batch.
    index : int, default 0
        The position of the first bad report in the batch.
    reason : str, optional
        What is wrong with that report alone; ``message`` if not given.

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> try:
    ...     m.reports_from_json(["a", "x", "b"])
    ... except dn.ReportError as exc:
    ...     print(exc.index, exc.reason)
    1 GRR report rejected: value 'x' is not in the domain of GRR: ['a', 'b', 'c']
    """

    def __init__(self, message: str, index: int = 0, reason: str | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.reason = message if reason is None else reason


class FieldReportError(ReportError):
    """A bad report whose fault is a field inside it.

    ``subfield`` (e.g. ``.group``, ``.level``) is appended to the report's
    path when the server names it.

    Parameters
    ----------
    message : str
        What is wrong with the batch.
    index : int
        The position of the first bad report in the batch.
    subfield : str
        The field of that report at fault, with its leading dot.
    reason : str, optional
        What is wrong with that report alone; ``message`` if not given.

    Examples
    --------
    >>> from deniable.errors import FieldReportError, ReportError
    >>> exc = FieldReportError("report 2: level must be 0 or 1", 2, ".level")
    >>> isinstance(exc, ReportError), exc.index, exc.subfield, exc.reason
    (True, 2, '.level', 'report 2: level must be 0 or 1')
    """

    def __init__(self, message: str, index: int, subfield: str, reason: str | None = None) -> None:
        super().__init__(message, index, reason)
        self.subfield = subfield


class CategoryError(DeniableError, ValueError):
    """A true value that is not one of a frequency oracle's categories.

    ``value`` is the value; ``index`` is its position among the values passed
    to ``privatize_many`` (None for a single ``privatize``), so that the
    command line can name the row.

    Parameters
    ----------
    message : str
        What is wrong, naming the categories.
    value : object
        The value that is not a category.
    index : int, optional
        Its position among the values passed to ``privatize_many``; None
        for a single ``privatize``.

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> try:
    ...     m.privatize_many(["a", "b", "z"])
    ... except dn.CategoryError as exc:
    ...     print(repr(exc.value), exc.index)
    'z' 2
    """

    def __init__(self, message: str, value: object, index: int | None = None) -> None:
        super().__init__(message)
        self.value = value
        self.index = index


class AggregateError(DeniableError, ValueError):
    """Aggregates of different mechanism configurations, or a malformed aggregate.

    An aggregate carries its configuration's fingerprint, so tallies made
    under different probabilities are never merged or estimated together.

    Examples
    --------
    >>> import deniable as dn
    >>> stat = dn.GRR(["a", "b", "c"], epsilon=1.0).aggregate(["a", "b"])
    >>> try:
    ...     dn.GRR(["a", "b", "c"], epsilon=2.0).estimate_from(stat)
    ... except dn.AggregateError as exc:
    ...     print(exc)
    aggregate was made by another mechanism configuration (...)
    """


class StateError(DeniableError, ValueError):
    """A device's kept state that cannot be used.

    The state (:mod:`deniable._client_state`) was written for another
    mechanism configuration, is malformed or unreadable, or is readable by
    other users.

    Examples
    --------
    >>> import deniable as dn
    >>> store = dn.MemoryStore()
    >>> _ = dn.load_or_create(store, "rappor", "0123abcd", lambda source: {"cohort": 3})
    >>> try:
    ...     dn.load_or_create(store, "rappor", "ffff0000", lambda source: {"cohort": 3})
    ... except dn.StateError as exc:
    ...     print(exc)
    client state MemoryStore(holding a state) belongs to mechanism 'rappor' with configuration ...
    """


class SeparationError(DeniableError, ValueError):
    """The maximum-likelihood estimate of a survey fit does not exist.

    A coefficient diverges (the fitted prevalence runs to 0 or 1 in some
    cell, as under separation in logistic regression) or the information
    matrix is singular (:mod:`deniable.survey`).

    Examples
    --------
    >>> import deniable as dn
    >>> issubclass(dn.SeparationError, ValueError)
    True
    >>> str(dn.SeparationError("the fitted prevalence runs to 0 or 1"))
    'the fitted prevalence runs to 0 or 1'
    """


class DeniableWarning(UserWarning):
    """Base of every warning deniable issues.

    ``warnings.simplefilter("error", DeniableWarning)`` turns all of them
    into errors.

    Examples
    --------
    >>> import warnings
    >>> import deniable as dn
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("stopped early", dn.ConvergenceWarning)
    >>> [issubclass(w.category, dn.DeniableWarning) for w in caught]
    [True]
    """


class ConvergenceWarning(DeniableWarning):
    """An iterative fit stopped before its tolerance.

    The iterative Bayesian update (:func:`deniable._mle.fit`) stopped at
    ``max_iter`` before the change between iterations fell below ``tol``.

    Examples
    --------
    >>> import warnings
    >>> import deniable as dn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", dn.ConvergenceWarning)
    ...     try:
    ...         warnings.warn("stopped at max_iter=10", dn.ConvergenceWarning)
    ...     except dn.ConvergenceWarning as exc:
    ...         print(exc)
    stopped at max_iter=10
    """


class PowerApproximationWarning(DeniableWarning):
    """A power or sample size from the normal approximation where it may be off by more than 0.06.

    Raised by :func:`deniable.survey.prevalence_power` and
    :func:`~deniable.survey.prevalence_sample_size` under 100 respondents or
    when a parameter's expected estimate lies within two standard errors of 0
    or 1 (see :mod:`deniable.survey`'s power functions);
    :func:`~deniable.survey.simulated_power` gives the real test's power there.

    Examples
    --------
    >>> import warnings
    >>> import deniable as dn
    >>> issubclass(dn.PowerApproximationWarning, dn.DeniableWarning)
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", dn.PowerApproximationWarning)
    ...     warnings.warn("under 100 respondents", dn.PowerApproximationWarning)
    """
