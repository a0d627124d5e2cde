"""A survey question: id + text + (randomizer | plain field).

Two kinds of question:

* :class:`Question`, randomized: devices randomize the answer with the
  question's ``randomizer``, a registered mechanism (a frequency oracle, a
  numeric mechanism, a survey design: :mod:`deniable.mechanisms.registry`)
  or heavy-hitter discovery (:class:`deniable.heavy.HeavyHitters`). Beside
  it the question keeps only what is about the question itself:
  ``allow_infinite_epsilon`` and ``unrelated_question`` (designs), ``units``
  (numbers), ``bounds`` (the answers' range of a key-value question) and
  ``by``, the plain categorical questions a design's answers are also counted by.
* :class:`PlainQuestion`, not randomized (``randomized: false``): an integer
  in a range or a category, stored as given.

The storage's interface of a randomized question (``reports_from_json``,
``reports_to_json``, ``empty_aggregate``, ``aggregate_from_json``,
``aggregate_from_bytes``, ``aggregate``) is the randomizer's own contract:
its checked reports, its mergeable aggregate and that aggregate's JSON and
stored (bytes, :class:`~deniable._aggregates.Packed`) forms. A design question's
aggregate is kept as a :class:`Tally` of its answer counts per group (and
per category of each ``by`` question), the form it is stored in.

What differs by kind (the stored and public definition) is chosen by the
randomizer's registry kind (:func:`kind_of`), in the tables at the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from deniable._aggregates import Packed, SupportCounts
from deniable.errors import AggregateError, FieldReportError, ReportError
from deniable.mechanisms import registry
from deniable.mechanisms._contract import CheckedReports

__all__ = ["Question", "PlainQuestion", "ListQuestion", "AnyQuestion", "Tally", "kind_of", "design_spec", "JOINT",
           "LIST", "FREQUENCY", "SKETCH", "NUMERIC", "DESIGN", "HEAVY", "PLAIN", "RANGE", "SET", "KEYVALUE"]

FREQUENCY, SKETCH, NUMERIC, DESIGN = "frequency", "sketch", "numeric", "design"
HEAVY = "discovery"
"""The kind of heavy-hitter discovery (:class:`~deniable.heavy.HeavyHitters`, not in the registry)."""
PLAIN = "plain"
"""The kind of a plain question (no randomizer)."""
JOINT = "joint"
"""The kind of a joint question (:class:`~deniable.Joint`, :mod:`deniable.server._joint_questions`)."""
RANGE = "range"
"""The kind of a number question for ranges and quantiles (:class:`~deniable.HierarchicalHistogram`,
:class:`~deniable.HaarHRR`: :mod:`deniable.server._numeric_questions`)."""
SET = "set"
"""The kind of a choose-several question (:class:`~deniable.SetValued`: :mod:`deniable.server._set_questions`)."""
KEYVALUE = "keyvalue"
"""The type and kind of a key-value question (:class:`~deniable.PCKV`: :mod:`deniable.server._keyvalue_questions`)."""
LIST = "list-experiment"
"""The type and kind of a list experiment (:class:`ListQuestion`)."""


def kind_of(randomizer: Any) -> str:
    """The registry kind of a randomizer (``"frequency"``, ``"sketch"``, ``"numeric"``, ``"design"``,
    ``"discovery"``: :data:`HEAVY`)."""
    return registry.entry(type(randomizer).wire_id).kind


# ----------------------------------------------------------------- aggregate
@dataclass(frozen=True)
class Tally(Packed):
    """Mergeable counts of one question's answers: named integer arrays, added elementwise.

    ``key`` names the question and its configuration, so that tallies of
    different questions are never merged (it is the ``fingerprint`` of the stored form).
    """

    key: str
    arrays: Mapping[str, NDArray[np.int64]]

    @property
    def fingerprint(self) -> str:  # type: ignore[override]
        return self.key

    def _parts(self) -> list[NDArray[np.int64]]:
        return list(self.arrays.values())

    def _from_parts(self, parts: Sequence[NDArray[Any]]) -> Tally:
        return Tally(self.key, dict(zip(self.arrays, parts, strict=True)))

    def __add__(self, other: Tally) -> Tally:
        if self.key != other.key or self.arrays.keys() != other.arrays.keys():
            raise AggregateError(f"cannot add the tallies of {self.key!r} and {other.key!r}")
        return Tally(self.key, {k: self.arrays[k] + other.arrays[k] for k in self.arrays})

    def to_json(self) -> dict[str, Any]:
        return {"kind": "tally", "key": self.key, "arrays": {k: v.tolist() for k, v in self.arrays.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], like: Tally) -> Tally:
        """A stored tally, checked against the empty tally ``like`` of the question (same key and shapes)."""
        try:
            arrays = {k: np.asarray(v, dtype=np.int64) for k, v in data["arrays"].items()}
            ok = data.get("kind") == "tally" and data["key"] == like.key and arrays.keys() == like.arrays.keys()
        except (KeyError, TypeError, AttributeError, ValueError):
            ok = False
        if not ok or any(arrays[k].shape != like.arrays[k].shape for k in arrays):
            raise AggregateError(f"the stored tally is not one of {like.key!r}")
        return cls(like.key, arrays)


def _select(reports: Any, rows: Sequence[int] | None) -> Any:
    """The reports at ``rows`` (all if ``None``), still checked."""
    if rows is None:
        return reports
    if isinstance(reports, CheckedReports):
        return reports.select(rows)
    return reports[np.asarray(rows, dtype=np.int64)]


def design_spec(design: Any) -> dict[str, Any]:
    """A design as written in a survey: RRreg's model name and exact ``p`` (fractions as text)."""
    return {"model": design.model, "p": [str(v) for v in design.p]}


# ---------------------------------------------------------------- questions
@dataclass(frozen=True)
class Question:
    """A randomized question: devices randomize the answer with ``randomizer``.

    ``mechanism``, ``design`` and ``hitters`` name the same randomizer (as
    the question kinds before it called it).
    """

    id: str
    text: str
    type: str
    randomizer: Any
    allow_infinite_epsilon: bool = False
    unrelated_question: str | None = None
    units: str | None = None
    by: tuple[tuple[str, int], ...] = field(default=())  # a design's plain categorical questions: (id, categories)
    parts: tuple[tuple[str, str], ...] = field(default=())  # a joint question's parts: (id, text)
    bounds: tuple[float, float] | None = None  # a key-value question's (low, high), mapped onto [-1, 1]
    randomized: ClassVar[Literal[True]] = True

    @property
    def kind(self) -> str:
        """The randomizer's registry kind (:func:`kind_of`)."""
        return kind_of(self.randomizer)

    @property
    def mechanism(self) -> Any:
        return self.randomizer

    @property
    def design(self) -> Any:
        return self.randomizer

    @property
    def hitters(self) -> Any:
        return self.randomizer

    @property
    def epsilon(self) -> float:
        return float(self.randomizer.epsilon)

    @property
    def value_range(self) -> tuple[float, float]:
        """A key-value question's answers' ``(low, high)``."""
        if self.bounds is None:
            raise ValueError(f"question {self.id!r} has no value range (only a keyvalue question has one)")
        return self.bounds

    @property
    def max_length(self) -> int:
        """A free-text question's longest answer kept, in bytes of UTF-8 (its randomizer's)."""
        return int(self.randomizer.max_length)

    @property
    def categories(self) -> list[Any]:
        """The answers of a frequency or design question (the randomizer's domain)."""
        return list(self.randomizer.domain)

    def to_json(self) -> dict[str, Any]:
        """The stored (canonical) definition: the randomizer's exact configuration."""
        return _STORED[self.kind](self)

    def public_json(self) -> dict[str, Any]:
        """The question as devices see it."""
        return _PUBLIC[self.kind](self)

    # the storage's interface: the randomizer's contract
    def reports_from_json(self, values: Sequence[Any]) -> Any:
        """The checked reports; :class:`~deniable.errors.ReportError` names the first bad one."""
        try:
            return self.randomizer.reports_from_json(list(values))
        except ReportError as exc:
            locate = _LOCATE.get(self.kind)
            raise (exc if locate is None else locate(self.randomizer, values, exc)) from None

    def reports_to_json(self, checked: Any) -> list[Any]:
        return list(self.randomizer.reports_to_json(checked))

    def empty_aggregate(self) -> Any:
        none = np.zeros(0, dtype=np.int64)
        return self.aggregate({self.id: self.reports_from_json([]), **{qid: none for qid, _ in self.by}}, None)

    @cached_property
    def _empty(self) -> Any:
        return self.empty_aggregate()

    def aggregate_from_bytes(self, data: bytes) -> Any:
        """A stored aggregate (:meth:`~deniable._aggregates.Packed.to_bytes`), checked once by its
        header and length to be one of this exact configuration."""
        return self._empty.from_bytes(data)

    def aggregate_from_json(self, data: Mapping[str, Any]) -> Any:
        """A stored aggregate, checked to be one of this exact configuration."""
        if self.kind == DESIGN:
            return Tally.from_json(data, self.empty_aggregate())
        return self.randomizer.aggregate_from_json(data)

    def aggregate(self, checked: Mapping[str, Any], rows: Sequence[int] | None) -> Any:
        """The aggregate of the responses ``rows`` (all if ``None``) of a checked request."""
        reports = _select(checked[self.id], rows)
        stat = self.randomizer.aggregate(reports)
        return self._tally(stat, reports, checked, rows) if self.kind == DESIGN else stat

    # a design's aggregate: its answer counts, and by category of each `by` question
    def _tally(self, stat: SupportCounts, reports: CheckedReports, checked: Mapping[str, Any],
               rows: Sequence[int] | None) -> Tally:
        d = self.randomizer
        arrays = {"counts": d.answer_counts(stat)}
        cells = stat.counts.size
        for qid, k in self.by:
            by = np.bincount(_select(checked[qid], rows) * cells + reports.checked, minlength=k * cells)
            arrays[f"by:{qid}"] = by.reshape(k, d.groups, cells // d.groups)
        key = f"design:{self.id}:{d.model}:{','.join(design_spec(d)['p'])}"
        return Tally(key, {name: a.astype(np.int64) for name, a in arrays.items()})

    def design_stat(self, tally: Tally) -> SupportCounts:
        """A design question's aggregate as its design's own :class:`~deniable.SupportCounts`."""
        counts = tally.arrays["counts"]
        return SupportCounts(self.randomizer.fingerprint, counts.ravel(), int(counts.sum()))


@dataclass(frozen=True)
class PlainQuestion:
    """A question answered as is (``randomized: false``): an integer in a range, or a category."""

    id: str
    text: str
    type: str  # "integer" or "categorical"
    categories: tuple[Any, ...] = ()
    min: int = 0
    max: int = 0
    randomized: ClassVar[Literal[False]] = False
    kind: ClassVar[str] = PLAIN
    epsilon: ClassVar[float] = 0.0  # nothing is randomized; the answer is disclosed as given

    @property
    def values(self) -> list[Any]:
        """Every allowed answer, in order."""
        return list(self.categories) if self.type == "categorical" else list(range(self.min, self.max + 1))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text, "type": self.type, "randomized": False}
        if self.type == "categorical":
            out["categories"] = list(self.categories)
        else:
            out["min"], out["max"] = self.min, self.max
        return out

    def public_json(self) -> dict[str, Any]:
        return self.to_json()

    def reports_from_json(self, values: Sequence[Any]) -> NDArray[np.int64]:
        """Positions in :attr:`values` (categorical) or the integers themselves."""
        if self.type == "integer":
            for i, v in enumerate(values):
                if type(v) is not int or not self.min <= v <= self.max:
                    raise ReportError(
                        f"must be an integer from {self.min} to {self.max} (not randomized); got {v!r:.60}", i
                    )
            return np.array(values, dtype=np.int64).reshape(len(values))
        position = {(type(c), c): j for j, c in enumerate(self.categories)}
        out = np.empty(len(values), dtype=np.int64)
        for i, v in enumerate(values):
            j = position.get((type(v), v)) if isinstance(v, (str, int)) else None
            if j is None:
                raise ReportError(f"must be one of {list(self.categories)!r:.200} (not randomized); got {v!r:.60}", i)
            out[i] = j
        return out

    def reports_to_json(self, checked: NDArray[np.int64]) -> list[Any]:
        if self.type == "integer":
            return [int(v) for v in checked.tolist()]
        return [self.categories[j] for j in checked.tolist()]

    def _key(self) -> str:
        return f"plain:{self.id}:{self.type}:{len(self.values)}"

    def empty_aggregate(self) -> Tally:
        """Counts per allowed answer."""
        return Tally(self._key(), {"counts": np.zeros(len(self.values), dtype=np.int64)})

    def aggregate_from_json(self, data: Mapping[str, Any]) -> Tally:
        return Tally.from_json(data, self.empty_aggregate())

    def aggregate_from_bytes(self, data: bytes) -> Tally:
        """A stored tally (:meth:`Tally.to_bytes`), checked by its header and length."""
        return self.empty_aggregate().from_bytes(data)

    def aggregate(self, checked: Mapping[str, Any], rows: Sequence[int] | None) -> Tally:
        values = _select(checked[self.id], rows)
        position = values - self.min if self.type == "integer" else values
        counts = np.bincount(position, minlength=len(self.values)).astype(np.int64)
        return Tally(self._key(), {"counts": counts})


@dataclass(frozen=True)
class ListQuestion:
    """A list experiment (``type: list-experiment``, :mod:`deniable.server._list_questions`): ``items``
    (the ``J`` control items) and the ``sensitive`` item; each report is ``(treat, count)``."""

    id: str
    text: str
    items: tuple[str, ...]
    sensitive: str
    type: ClassVar[str] = LIST
    kind: ClassVar[str] = LIST
    randomized: ClassVar[Literal[False]] = False  # answered as given; the lists do the hiding
    epsilon: ClassVar[float] = math.inf  # the floor and the ceiling of the longer list reveal the answer
    allow_infinite_epsilon: ClassVar[bool] = True

    @property
    def J(self) -> int:  # noqa: N802 - the literature's name
        """The number of control items."""
        return len(self.items)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "type": LIST, "items": list(self.items),
                "sensitive": self.sensitive, "allow_infinite_epsilon": True}

    def public_json(self) -> dict[str, Any]:
        return {**self.to_json(), "randomized": False, "epsilon": None, "reveals_truth": True}

    def reports_from_json(self, values: Sequence[Any]) -> NDArray[np.int64]:
        """Each report ``{"treat": 0 | 1, "count": k}`` as the row ``(treat, k)``."""
        out = np.empty((len(values), 2), dtype=np.int64)
        for i, v in enumerate(values):
            if not isinstance(v, Mapping) or set(v) != {"treat", "count"}:
                raise ReportError(f'must be {{"treat": 0 or 1, "count": an integer}}; got {v!r:.60}', i)
            treat, count = v["treat"], v["count"]
            if type(treat) is not int or treat not in (0, 1):
                raise ReportError(f"treat must be 0 (the {self.J} control items) or 1 (with the sensitive "
                                  f"item); got {treat!r:.60}", i)
            top = self.J + treat
            if type(count) is not int or not 0 <= count <= top:
                raise ReportError(f"count must be an integer from 0 to {top} (the items of list "
                                  f"{'with' if treat else 'without'} the sensitive item); got {count!r:.60}", i)
            out[i] = treat, count
        return out

    def reports_to_json(self, checked: NDArray[np.int64]) -> list[Any]:
        return [{"treat": int(t), "count": int(c)} for t, c in checked.tolist()]

    def _key(self) -> str:
        return f"list:{self.id}:{self.J}"

    def empty_aggregate(self) -> Tally:
        """Counts of each answer ``0..J+1`` in each list (row 0: control, row 1: treatment)."""
        return Tally(self._key(), {"counts": np.zeros((2, self.J + 2), dtype=np.int64)})

    def aggregate_from_json(self, data: Mapping[str, Any]) -> Tally:
        return Tally.from_json(data, self.empty_aggregate())

    def aggregate_from_bytes(self, data: bytes) -> Tally:
        """A stored tally (:meth:`Tally.to_bytes`), checked by its header and length."""
        return self.empty_aggregate().from_bytes(data)

    def aggregate(self, checked: Mapping[str, Any], rows: Sequence[int] | None) -> Tally:
        reports = checked[self.id] if rows is None else checked[self.id][np.asarray(rows, dtype=np.int64)]
        cells = reports[:, 0] * (self.J + 2) + reports[:, 1]
        counts = np.bincount(cells, minlength=2 * (self.J + 2)).reshape(2, self.J + 2).astype(np.int64)
        return Tally(self._key(), {"counts": counts})


AnyQuestion = Question | PlainQuestion | ListQuestion
"""A survey question: randomized (by a mechanism, a survey design or heavy-hitter discovery), plain, or a list
experiment."""


# ------------------------------------------------- what differs by kind: definitions
def _base(q: Question) -> dict[str, Any]:
    return {"id": q.id, "text": q.text, "type": q.type}


def _frequency(q: Question) -> dict[str, Any]:
    return {**_base(q), "categories": q.categories, "mechanism": q.randomizer.to_config()}


def _design(q: Question) -> dict[str, Any]:
    out = {**_base(q), "design": design_spec(q.randomizer)}
    if q.allow_infinite_epsilon:
        out["allow_infinite_epsilon"] = True
    if q.unrelated_question is not None:
        out["unrelated_question"] = q.unrelated_question
    return out


def _design_public(q: Question) -> dict[str, Any]:
    """The exact channel config of each group (epsilon ``None`` where infinite) and the design's config."""
    d = q.randomizer
    channels = []
    for g in range(1, d.groups + 1):
        config = d.channel(g).to_config()
        if not math.isfinite(config["epsilon"]):
            config["epsilon"] = None
        channels.append(config)
    return {
        **_design(q), "categories": [False, True], "randomized": True,
        "epsilon": q.epsilon if math.isfinite(q.epsilon) else None, "reveals_truth": not math.isfinite(q.epsilon),
        "groups": d.groups, "channels": channels, "mechanism": d.to_config(),
    }


def _numeric(q: Question) -> dict[str, Any]:
    out = {**_base(q), "mechanism": q.randomizer.to_config()}
    if q.units is not None:
        out["units"] = q.units
    return out


def _numeric_public(q: Question) -> dict[str, Any]:
    m = q.randomizer
    return {**_numeric(q), "randomized": True, "epsilon": q.epsilon, "low": m.low, "high": m.high}


def _multiple(q: Question) -> dict[str, Any]:
    """A choose-several question's options, its most choices and its exact :class:`~deniable.SetValued`
    configuration."""
    m = q.randomizer
    return {**_base(q), "options": list(m.domain), "max_choices": m.max_items, "mechanism": m.to_config()}


def _multiple_public(q: Question) -> dict[str, Any]:
    return {**_multiple(q), "randomized": True, "epsilon": q.epsilon}


def _keyvalue(q: Question) -> dict[str, Any]:
    """A key-value question's keys, answer range, units, most pairs and exact :class:`~deniable.PCKV`
    configuration."""
    m = q.randomizer
    low, high = q.value_range
    units = {} if q.units is None else {"units": q.units}
    return {**_base(q), "keys": list(m.keys), "low": low, "high": high, **units, "max_pairs": m.max_pairs,
            "mechanism": m.to_config()}


def _keyvalue_public(q: Question) -> dict[str, Any]:
    return {**_keyvalue(q), "randomized": True, "epsilon": q.epsilon}


def _heavy(q: Question) -> dict[str, Any]:
    return {**_base(q), "discovery": q.randomizer.to_config()}


def _heavy_public(q: Question) -> dict[str, Any]:
    """The configuration, and the limits the page shows (``alphabet`` when set)."""
    h = q.randomizer
    return {**_heavy(q), "randomized": True, "epsilon": q.epsilon, "max_length": h.max_length,
            "kind": h.kind, "method": h.method, **({} if h.alphabet is None else {"alphabet": h.alphabet})}


def _heavy_located(hitters: Any, values: Sequence[Any], exc: ReportError) -> ReportError:
    """A rejected free-text batch's error, with the part of the bad report at fault (error path only)."""
    item = values[exc.index] if 0 <= exc.index < len(values) else None
    parts = ("sketch", "word") if hitters.method == "sfp" else ("sketch",)
    if not isinstance(item, dict) or set(item) != {"level", *parts}:
        return exc
    level = item["level"]
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= hitters.levels:
        return FieldReportError(exc.reason, exc.index, ".level")
    for part in parts:
        try:
            hitters.oracle.reports_from_json([item[part]])
        except ReportError as bad:
            return FieldReportError(bad.reason, exc.index, f".{part}")
    return exc


def _joint(q: Question) -> dict[str, Any]:
    """A joint question's parts (id, text, answers) and its exact :class:`~deniable.Joint` configuration."""
    questions = [{"id": pid, "text": text, "categories": list(categories)}
                 for (pid, text), categories in zip(q.parts, q.randomizer.questions, strict=True)]
    return {**_base(q), "questions": questions, "mechanism": q.randomizer.to_config()}


def _joint_public(q: Question) -> dict[str, Any]:
    return {**_joint(q), "randomized": True, "epsilon": q.epsilon}


_Form = Callable[[Question], dict[str, Any]]
_STORED: dict[str, _Form] = {FREQUENCY: _frequency, SKETCH: _frequency, DESIGN: _design, NUMERIC: _numeric,
                             HEAVY: _heavy, JOINT: _joint, RANGE: _numeric, SET: _multiple, KEYVALUE: _keyvalue}
_PUBLIC: dict[str, _Form] = {FREQUENCY: _frequency, SKETCH: _frequency, DESIGN: _design_public,
                             NUMERIC: _numeric_public, HEAVY: _heavy_public, JOINT: _joint_public,
                             RANGE: _numeric_public, SET: _multiple_public, KEYVALUE: _keyvalue_public}
_LOCATE: dict[str, Callable[[Any, Sequence[Any], ReportError], ReportError]] = {HEAVY: _heavy_located}
