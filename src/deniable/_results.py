"""One result shape for every estimate and fit (scipy.stats and statsmodels are the models).

Every result of deniable (frequency and mean estimates, survey fits and
regressions, heavy-hitter discoveries, joint estimates) answers the same calls:

* ``confidence_interval(confidence_level=0.95, method=...)``: a
  :class:`ConfidenceInterval` ``(low, high)``, arrays aligned with the
  result's rows or floats for a single number, as ``scipy.stats`` returns
  them. The methods that apply are the result's :attr:`Result.ci_methods`
  (the first is the default); any other is refused with a ``ValueError``
  naming them, never answered with NaN. ``ci(level, method)`` is the older
  spelling and returns what it always returned (a pair, or a dict for a
  survey fit).
* ``std_errors`` (one per row) or ``std_error`` (a single number).
* ``to_dict(confidence_level=0.95, method=None)``: JSON-ready (plain floats,
  lists and strings; NaN and infinity become ``None``), naming the
  ``confidence_level`` and ``method`` of its ``ci_low`` / ``ci_high``. The row
  labels travel under their plural (``categories``, ``parameters``,
  ``values``, ``cells``), each column as a list aligned with them.
* ``to_frame(...)``: the same table as a pandas DataFrame (needs pandas).
* ``_repr_html_()``: the table in a notebook, every cell escaped.

A result describes itself once, as a :class:`ResultTable` (its scalar
fields and its columns); :class:`Result` builds the three forms from it.

>>> ci = ConfidenceInterval(0.1, 0.3)
>>> low, high = ci
>>> (low, high), bool(ci.contains(0.2))
((0.1, 0.3), True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, ClassVar, NoReturn

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ConfidenceInterval", "Result", "ResultTable", "check_level", "check_method", "jsonable", "pandas",
           "refuse_method"]


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval: ``low`` and ``high`` (arrays aligned with a result's rows, or floats).

    Like ``scipy.stats``' result of the same name; it also unpacks like a
    pair: ``low, high = est.confidence_interval()``.

    Parameters
    ----------
    low : float or numpy.ndarray
        The lower ends.
    high : float or numpy.ndarray
        The upper ends, aligned with ``low``.

    Examples
    --------
    >>> from deniable import ConfidenceInterval
    >>> ci = ConfidenceInterval(low=0.1, high=0.3)
    >>> low, high = ci
    >>> (low, high), bool(ci.contains(0.2)), bool(ci.contains(0.4))
    ((0.1, 0.3), True, False)
    """

    low: Any
    high: Any

    def __iter__(self) -> Any:
        return iter((self.low, self.high))

    def contains(self, value: ArrayLike) -> Any:
        """Whether ``low <= value <= high`` (elementwise)."""
        v = np.asarray(value)
        return (self.low <= v) & (v <= self.high)


def check_level(level: Any) -> float:
    """Validate a confidence level: a number in (0, 1)."""
    if isinstance(level, bool) or not isinstance(level, Real) or not 0 < float(level) < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    return float(level)


def _words(names: Sequence[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def check_method(method: Any, methods: Sequence[str], why: str = "") -> str:
    """``method`` if it is one of ``methods``, else a ValueError naming those that apply (and ``why``)."""
    if isinstance(method, str) and method in methods:
        return method
    refuse_method(method, methods, why)


def refuse_method(method: Any, methods: Sequence[str], why: str = "") -> NoReturn:
    """The ValueError of a confidence-interval method that does not apply: names ``methods`` (and ``why``)."""
    if not methods:
        raise ValueError(f"no confidence interval applies{why}; got method {method!r}")
    raise ValueError(f"method must be {_words(methods)}{why}; got {method!r}")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON: numpy scalars and arrays as Python numbers and lists, tuples as lists,
    NaN and infinity as ``None``."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def pandas() -> Any:
    """The pandas module, or an ImportError naming the extra that installs it."""
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - exercised without pandas
        raise ImportError("to_frame() needs pandas: pip install 'deniable[stats]'") from exc
    return pd


@dataclass(frozen=True)
class ResultTable:
    """What a result shows: its scalar ``fields`` and its ``columns``.

    A result with rows names its label column ``index`` (``"category"``) with
    the ``labels`` and their plural ``labels_key`` (``"categories"``) for
    :meth:`Result.to_dict`; each column is then aligned with the labels. A
    single-number result has ``index=None`` and scalar columns.
    """

    fields: dict[str, Any]
    columns: dict[str, Any]
    index: str | None = None
    labels: Sequence[Any] = ()
    labels_key: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # shown in notebooks only


_HEADERS = {"std_error": "std. error", "ci_high": "interval high"}
_ERRORS = ("std_error", "ci_low", "ci_high")


def _missing(values: Any) -> bool:
    """Whether a column has no number at all (no standard error exists, e.g. without reports)."""
    arr = np.asarray(values, dtype=object).ravel()
    return all(v is None or (isinstance(v, float) and v != v) for v in arr.tolist())


class Result:
    """Mixin: :meth:`to_dict`, :meth:`to_frame`, :meth:`_repr_html_` and :meth:`ci` from :meth:`_table`
    and :meth:`confidence_interval`."""

    ci_methods: ClassVar[tuple[str, ...]] = ("normal",)
    """The interval methods that apply to this result, the default first."""
    _methods_note: ClassVar[str] = ""  # why the others do not apply, in the refusal
    _headers: ClassVar[dict[str, str]] = {}  # a column's notebook header where it is not its name

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """The two-sided interval at ``confidence_level`` by ``method`` (default: the first of :attr:`ci_methods`)."""
        raise NotImplementedError

    def ci(self, level: float = 0.95, method: str | None = None) -> Any:
        """``(low, high)`` at ``level``: :meth:`confidence_interval`'s older spelling."""
        return tuple(self.confidence_interval(level, method))

    def _method(self, method: str | None) -> str:
        """``method``, by default the first of :attr:`ci_methods`, refused unless it applies."""
        if method is None and self.ci_methods:
            return self.ci_methods[0]
        return check_method(method, self.ci_methods, self._methods_note)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        raise NotImplementedError

    def _default_level(self) -> float:
        return 0.95

    def _checked(self, confidence_level: float | None, method: str | None) -> tuple[float, str | None]:
        level = self._default_level() if confidence_level is None else check_level(confidence_level)
        return level, (self._method(method) if self.ci_methods or method is not None else None)

    def to_dict(self, confidence_level: float | None = None, method: str | None = None) -> dict[str, Any]:
        """The result as plain JSON: its fields, ``confidence_level``, ``method``, labels and columns.

        NaN and infinity become ``None``. ``confidence_level`` defaults to
        0.95 (a discovery's to the level it was identified at).
        """
        level, chosen = self._checked(confidence_level, method)
        t = self._table(level, chosen)
        labels = {t.labels_key: list(t.labels)} if t.index is not None else {}
        out: dict[str, Any] = jsonable({**t.fields, "confidence_level": level, "method": chosen, **labels,
                                        **t.columns})
        return out

    def to_frame(self, confidence_level: float | None = None, method: str | None = None) -> Any:
        """The result's table as a pandas DataFrame: the label column first, then the columns (one row for
        a single number)."""
        pd = pandas()
        level, chosen = self._checked(confidence_level, method)
        t = self._table(level, chosen)
        if t.index is None:
            return pd.DataFrame({k: [v] for k, v in t.columns.items()})
        return pd.DataFrame({t.index: list(t.labels), **t.columns})

    def _caption(self) -> str:
        return type(self).__name__

    def _note(self, more: int) -> str:
        return f"{more} more rows (to_frame() has all)" if more > 0 else ""

    def _repr_html_(self, max_rows: int = 60) -> str:
        """The result as an HTML table (Jupyter): the columns at the 95% level, without error columns
        where no standard error exists; every cell escaped."""
        from deniable._html import table

        level, chosen = self._checked(0.95, None)
        t = self._table(level, chosen)
        columns = {k: v for k, v in {**t.columns, **t.extra}.items() if not (k in _ERRORS and _missing(v))}
        names = {**_HEADERS, "ci_low": f"{level:.0%} interval low", **self._headers}
        headers = ([t.index] if t.index is not None else []) + [names.get(k, k) for k in columns]
        if t.index is None:
            rows = [[_cell(v) for v in columns.values()]]
            more = 0
        else:
            shown = min(len(t.labels), max_rows)
            rows = [[_label(t.labels[i]), *(_cell(np.asarray(v)[i]) for v in columns.values())] for i in range(shown)]
            more = len(t.labels) - shown
        return table(self._caption(), headers, rows, self._note(more))


def _cell(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _label(value: Any) -> Any:
    return ", ".join(map(str, value)) if isinstance(value, tuple) else _cell(value)
