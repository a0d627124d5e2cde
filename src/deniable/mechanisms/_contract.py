"""The one contract every mechanism keeps, frequency oracle or numeric.

A mechanism couples the device-side randomizer with its aggregation and its
estimator, and travels as a versioned configuration::

    value --privatize--> report --reports_to_json--> wire --reports_from_json-->
    checked reports --aggregate--> mergeable statistic --estimate_from--> estimate

This module holds what both kinds share: identity (wire id, configuration,
fingerprint, equality), the wire form of reports, and validation that happens
once. ``reports_from_json`` and ``validate`` return :class:`CheckedReports`,
a read-only array that remembers the mechanism that checked it, so that
``aggregate`` and ``reports_to_json`` take it without checking again. A bad
batch raises :class:`~deniable.errors.ReportError` carrying the index of the
first bad report, for the server and the command line to name the field or
the row.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._aggregates import Mergeable
from deniable.errors import ReportError
from deniable.wire import _codecs as codecs
from deniable.wire._config import CONFIG_FORMAT, CONFIG_VERSION

__all__ = ["Mechanism", "CheckedReports", "CONFIG_FORMAT", "CONFIG_VERSION"]


class CheckedReports(np.ndarray):
    """Reports as ``privatize_many`` gives them, already checked by one mechanism.

    Read-only, so they stay what was checked. ``fingerprint`` names the
    mechanism configuration that checked them and ``checked`` is that
    mechanism's internal form (category positions for GRR, the array itself
    otherwise). Any array derived from it (a slice, a copy, arithmetic) is a
    plain unchecked array again, and is checked when it is used.
    ``reports_from_json`` and ``validate`` make it (:meth:`wrap` for a
    mechanism's own code).

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> reports = m.reports_from_json(["a", "b", "c", "a"])
    >>> type(reports).__name__, reports.fingerprint == m.fingerprint, reports.flags.writeable
    ('CheckedReports', True, False)
    >>> reports.checked.tolist(), reports[:2].fingerprint is None, reports.select([0, 3]).checked.tolist()
    ([0, 1, 2, 0], True, [0, 0])
    """

    fingerprint: str | None
    checked: NDArray[Any] | None

    @classmethod
    def wrap(cls, reports: NDArray[Any], checked: NDArray[Any], fingerprint: str) -> CheckedReports:
        out = np.asarray(reports).view(cls)
        out.setflags(write=False)
        checked = checked.view(np.ndarray)
        checked.setflags(write=False)
        out.fingerprint, out.checked = fingerprint, checked
        return out

    def select(self, index: Sequence[int]) -> CheckedReports:
        """The reports at positions ``index``, still checked (no second validation).

        Plain indexing gives an array that is checked again when used; the
        checked form is aligned with the reports row by row, so the same
        rows of both stay a checked pair.
        """
        if self.checked is None or self.fingerprint is None:
            raise ValueError("select needs reports checked by a mechanism (reports_from_json)")
        rows = list(index)
        return CheckedReports.wrap(np.asarray(self)[rows], self.checked[rows], self.fingerprint)

    def __array_finalize__(self, obj: Any) -> None:
        self.fingerprint = None
        self.checked = None

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        if not isinstance(array, np.ndarray):
            return array
        plain = array.view(np.ndarray)
        return plain[()] if return_scalar else plain  # a reduction gives a scalar, as for a plain array

    def __reduce__(self) -> Any:  # pickles (Dask, multiprocessing) as a plain array
        return np.asarray(self).copy().__reduce__()


class Mechanism(ABC):
    """What every mechanism shares: identity, configuration, reports on the wire.

    Subclasses set ``wire_id`` (the stable mechanism id in configurations,
    never reused) and ``report_kind`` (how a report looks in numpy), and
    supply ``epsilon``, the configuration's ``domain`` field
    (``_domain_json``: the categories of a frequency oracle, ``[low, high]``
    for a numeric mechanism), the exact wire parameters (``_params``,
    ``_from_params``), report validation (``_validate``) and the aggregation
    of checked reports (``_aggregate_checked``). In Python, ``domain`` is
    the categories of a frequency oracle only; a numeric mechanism's range
    is ``bounds`` (``low``, ``high``).

    Examples
    --------
    >>> import deniable as dn
    >>> from deniable.mechanisms import Mechanism
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> isinstance(m, Mechanism), m.wire_id, m.report_kind
    (True, 'grr', 'category')
    >>> config = m.to_config()
    >>> config["format"], config["mechanism"], dn.from_config(config) == m
    ('deniable.mechanism', 'grr', True)
    >>> m.reports_to_json(m.reports_from_json(["a", "c"]))
    ['a', 'c']
    """

    wire_id: ClassVar[str]
    report_kind: ClassVar[str]
    wide_fields: ClassVar[tuple[str, ...]] = ()  # report fields that are decimal strings in wire version 2
    stat_type: ClassVar[type[Any]]  # the aggregate: SupportCounts or MeanStat

    # ------------------------------------------------------------- identity
    @property
    @abstractmethod
    def epsilon(self) -> float:
        """Privacy parameter realised by the sampler's integers (rounded up)."""

    def _claimable_epsilons(self) -> tuple[float, ...]:
        """The epsilons a stored configuration may claim (:func:`deniable.wire.from_config` checks the claim):
        :attr:`epsilon`, and what a mechanism stated in configurations written before it stated it exactly."""
        return (self.epsilon,)

    @property
    def delta(self) -> float | None:
        """The delta of an (epsilon, delta) guarantee; None for pure epsilon-LDP."""
        return None

    @property
    @abstractmethod
    def report_bits(self) -> int:
        """Bits a device uploads per report (at the least, to index the possible outputs)."""

    @property
    def name(self) -> str:
        return type(self).__name__

    # ------------------------------------------------------------ privatize
    @abstractmethod
    def privatize(self, value: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one respondent's value (secure randomness unless ``rng`` is given)."""

    @abstractmethod
    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many values at once; one report (row) per value."""

    # ---------------------------------------------------------------- wire
    @abstractmethod
    def _params(self) -> dict[str, Any]:
        """Exact wire parameters (integers where they decide probabilities)."""

    @classmethod
    @abstractmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> Mechanism:
        """Inverse of ``_params`` for the configuration's ``domain``."""

    @abstractmethod
    def _domain_json(self) -> Any:
        """The configuration's ``domain`` field."""

    def _domain_key(self) -> Any:
        """What of the domain decides equality (defaults to its JSON form)."""
        return json.dumps(self._domain_json(), sort_keys=True)

    def to_config(self) -> dict[str, Any]:
        """Versioned JSON-ready configuration (what a device needs to randomize)."""
        config = {
            "format": CONFIG_FORMAT,
            "version": CONFIG_VERSION,
            "mechanism": self.wire_id,
            "domain": self._domain_json(),
            "epsilon": self.epsilon,
            "params": self._params(),
        }
        if self.delta is not None:
            config["delta"] = self.delta
        return config

    @property
    def fingerprint(self) -> str:
        """Short hash of the configuration; aggregates carry it to prevent mixing."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            text = json.dumps(self.to_config(), sort_keys=True, separators=(",", ":"))
            cached = self.__dict__["_fingerprint"] = hashlib.sha256(text.encode()).hexdigest()[:16]
        return cached

    def _key(self) -> tuple[Any, ...]:
        return (self.wire_id, self._domain_key(), json.dumps(self._params(), sort_keys=True))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mechanism) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    # -------------------------------------------------------------- reports
    @abstractmethod
    def _validate(self, reports: Any) -> NDArray[Any]:
        """Reports in the mechanism's internal checked form; ValueError if one is malformed."""

    def _checked(self, reports: Any) -> NDArray[Any]:
        """The internal checked form, taken as is from :class:`CheckedReports` of this mechanism.

        A list of single structured reports (each ``privatize`` output a
        ``numpy.void``) is read as the structured array they make together,
        so every mechanism takes a list of its own single reports.
        """
        if (
            type(reports) is CheckedReports
            and reports.checked is not None
            and reports.fingerprint == self.fingerprint
        ):
            return reports.checked
        if isinstance(reports, (list, tuple)) and reports and isinstance(reports[0], np.void):
            reports = _stacked(reports)
        return self._validate(reports)

    def _public(self, checked: NDArray[Any]) -> NDArray[Any]:
        """Reports in the form ``privatize_many`` gives, from the internal checked form."""
        return checked

    def validate(self, reports: Any) -> NDArray[Any]:
        """Check that reports fit this mechanism; ValueError naming what is wrong."""
        return self._checked(reports)

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        """The internal checked form of JSON reports (ValueError if one is malformed)."""
        return self._validate(items)

    def reports_from_json(self, items: Sequence[Any], *, wire_version: int = 1) -> CheckedReports:
        """Parse and validate JSON reports (of wire version ``wire_version``, see :mod:`deniable.wire`), once.

        Returns :class:`CheckedReports` (reports as ``privatize_many`` gives
        them) that ``aggregate`` and ``reports_to_json`` take without checking
        again. Raises :class:`~deniable.errors.ReportError` (a ValueError)
        whose ``index`` is the first bad report and ``reason`` what is wrong
        with it.
        """
        if not isinstance(items, (list, tuple)):
            raise ReportError(f"reports must be a JSON array; got {type(items).__name__}")
        items = codecs.from_version(list(items), self.wide_fields, wire_version, self.name)
        try:
            checked = self._reports_from_json(items)
        except (ValueError, TypeError, OverflowError) as exc:
            raise self._report_error(items, exc) from None
        if len(checked) != len(items):  # a validator bug must not store a misaligned batch
            raise ReportError(f"{len(items)} reports checked into {len(checked)}", 0, "is not a report")
        return CheckedReports.wrap(self._public(checked), checked, self.fingerprint)

    def _report_error(self, items: list[Any], exc: Exception) -> ReportError:
        """The ReportError of a rejected batch (error path only).

        Numpy scalars among the items are shown as the values they hold
        (``'0'``, not ``np.str_('0')``): the batch is checked again as plain
        Python values to word the message.
        """
        plain = [x.item() if isinstance(x, np.generic) else x for x in items]
        message = str(exc)
        if any(p is not x for p, x in zip(plain, items, strict=True)):
            try:
                self._reports_from_json(plain)
            except (ValueError, TypeError, OverflowError) as again:
                message = str(again)
        index, reason = self._first_bad(plain)
        return ReportError(message, index, reason)

    def _first_bad(self, items: list[Any]) -> tuple[int, str]:
        """Index of the first report in ``items`` rejected on its own, and why (error path only)."""
        for i, item in enumerate(items):
            try:
                self._reports_from_json([item])
            except (ValueError, TypeError, OverflowError) as exc:
                return i, _without_index(str(exc))
        return 0, "the reports are rejected together but not one by one"

    def _report_to_json(self, report: Any) -> Any:
        return report.item() if isinstance(report, np.generic) else report

    def report_to_json(self, report: Any, *, wire_version: int = 1) -> Any:
        """One report as a JSON value (of wire version ``wire_version``)."""
        return codecs.to_version([self._report_to_json(report)], self.wide_fields, wire_version)[0]

    def _checked_to_json(self, checked: NDArray[Any]) -> list[Any]:
        return [self._report_to_json(r) for r in checked]

    def reports_to_json(self, reports: Any, *, wire_version: int = 1) -> list[Any]:
        """Reports as JSON values of wire version ``wire_version`` (checked first unless they are
        this mechanism's CheckedReports)."""
        return codecs.to_version(self._checked_to_json(self._checked(reports)), self.wide_fields, wire_version)

    # ------------------------------------------------------------- aggregate
    @abstractmethod
    def _aggregate_checked(self, checked: NDArray[Any]) -> Mergeable:
        """The mergeable statistic of reports in the internal checked form."""

    def aggregate(self, reports: Any) -> Any:
        """Mergeable sufficient statistic of a batch of reports (``+`` merges them)."""
        return self._aggregate_checked(self._checked(reports))

    def _aggregate_coded(self, cells: NDArray[Any], codes: NDArray[np.integer]) -> Any:
        """``aggregate`` of rows given by code: ``cells`` are this mechanism's checked reports of a
        column's distinct cells, ``codes`` each row's cell, so that the rows' checked reports are
        ``cells[codes]``. Taken row by row here (no take when ``cells`` is ``0..len-1``, integer
        categories as read); a mechanism whose statistic counts the checked values adds up the
        cells' tallies instead (:func:`~deniable._aggregates.tallied_counts`)."""
        if cells.dtype == codes.dtype and cells.ndim == 1 and np.array_equal(cells, np.arange(cells.size)):
            checked = codes
        else:
            checked = cells[codes]
        return self.aggregate(CheckedReports.wrap(checked, checked, self.fingerprint))

    def aggregate_from_json(self, data: Any) -> Any:
        """An aggregate of this mechanism from its ``to_json`` form.

        AggregateError (a ValueError) if ``data`` is malformed or was made by
        another mechanism configuration.
        """
        stat = self.stat_type.from_json(data)
        stat.require(self.stat_type, self.fingerprint)
        return stat

    @abstractmethod
    def estimate_from(self, stat: Any, target: Any = "population") -> Any:
        """The estimate from a (merged) aggregate, for the inference ``target``
        (``"population"`` or ``"respondents"``; see :mod:`deniable._estimate`)."""

    def estimate(self, reports: Any, target: Any = "population", *, by: Any = None) -> Any:
        """The unbiased estimate from reports: ``estimate_from(aggregate(reports), target)``.

        ``by``: one plain label per report (an app version, a country, an
        experiment's arm); the reports are then estimated slice by slice and a
        :class:`~deniable.SlicedEstimate` holds one result per label
        (:mod:`deniable._slices`).
        """
        if by is not None:
            from deniable._slices import estimate_by

            return estimate_by(self, reports, by, target)
        return self.estimate_from(self.aggregate(reports), target=target)

    def confidence_sequence(self, reports: Any, alpha: float = 0.05, *, looks: Any = None, planned_n: int = 10_000,
                            simultaneous: bool = False, target: Any = "population") -> Any:
        """Anytime-valid intervals over repeated looks (a :class:`~deniable.ConfidenceSequence`): every look's
        interval covers at once with probability ``1 - alpha`` (:mod:`deniable._sequences`; frequency oracles
        and numeric mechanisms). ``reports``: one batch (or aggregate) per look, or one array split at
        ``looks``."""
        from deniable._sequences import confidence_sequence

        return confidence_sequence(self, reports, alpha, looks=looks, planned_n=planned_n,
                                   simultaneous=simultaneous, target=target)


def _stacked(reports: Sequence[Any]) -> Any:
    """Single structured reports as one structured array (unchanged if they do not all share a dtype)."""
    first = reports[0].dtype
    if all(isinstance(r, np.void) and r.dtype == first for r in reports):
        return np.array(reports, dtype=first)
    return reports


def _without_index(message: str) -> str:
    """A one-report batch's error message without the report's index (0), which the caller replaces.

    A message names the index in one of two ways: ``"<Mechanism> report 0 ..."`` (the mechanism's
    name, one word, before the index, and the report's text after it) or ``"report <text> at index 0
    ..."`` (the index after the report's text). The report's own text may contain either phrase, so
    only the first ``" report 0"`` right after one word, else the last ``" at index 0"``, is the index.
    """
    head, found, tail = message.partition(" report 0")
    if found and " " not in head:
        return f"{head} report{tail}"
    head, found, tail = message.rpartition(" at index 0")
    return head + tail
