"""Survey questions beside the mechanism questions: survey designs and plain questions.

A **design question** is a yes/no question randomized by one of the classic
survey designs of :mod:`deniable.survey` (RRreg's model names and ``p``)::

    - id: used
      text: Have you used a study drug this term?
      type: yes-no
      design: {model: FR, p: [1/6, 1/6]}

Each group of the design is one exact :meth:`BinaryRR.channel
<deniable.mechanisms.binary.BinaryRR.channel>`; devices get those channel
configs and randomize with them. A one-group design's report is ``true`` /
``false``; a two-group design's device draws its group (1 or 2, uniformly,
with the same exact sampler) and reports ``{"group": g, "answer": bool}``.
UQTunknown asks the respondent the unrelated question
(``unrelated_question:`` text) and feeds that answer to the device's
randomizer; it is never sent. A design whose epsilon is infinite (an answer
reveals the truth: Mangat, triangular, SLD, CDM, UQTunknown) is refused
unless the question says ``allow_infinite_epsilon: true``: a deliberate
choice, for designs whose protection is the respondents' trust rather than
a local-DP guarantee.

A **plain question** (``randomized: false``) is asked and stored as given,
not privatized: ``type: integer`` with ``min`` and ``max``, or ``type:
categorical`` with ``categories``. Its answers are aggregated as counts per
value, and every design question keeps, per category of each plain
categorical question, its counts of answers per group, so results can show
the prevalence by category from the aggregates alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import AggregateError, FieldReportError, ReportError
from deniable.server.errors import SurveyError
from deniable.survey.designs import MODELS, Design, design
from deniable.wire import from_config

__all__ = ["Tally", "DesignQuestion", "PlainQuestion", "load_design_question", "load_plain_question",
           "MAX_INTEGER_RANGE"]

MAX_INTEGER_RANGE = 10_000
"""Most distinct values of a plain integer question (``max - min + 1``): its aggregate counts each."""


# ----------------------------------------------------------------- aggregate
@dataclass(frozen=True)
class Tally:
    """Mergeable counts of one question's answers: named integer arrays, added elementwise.

    ``key`` names the question and its configuration, so that tallies of
    different questions are never merged.
    """

    key: str
    arrays: Mapping[str, NDArray[np.int64]]

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


# ---------------------------------------------------------- design questions
def _fraction_text(value: Any) -> str:
    return str(value)  # Fraction: "1/6", or "1" / "0"


@dataclass(frozen=True)
class DesignQuestion:
    """A yes/no question randomized by a survey design (:mod:`deniable.survey`)."""

    id: str
    text: str
    design: Design
    allow_infinite_epsilon: bool = False
    unrelated_question: str | None = None
    by: tuple[tuple[str, int], ...] = field(default=())  # plain categorical questions: (id, categories)
    type: str = "yes-no"
    randomized: bool = True

    @property
    def epsilon(self) -> float:
        return float(self.design.epsilon)

    @property
    def groups(self) -> int:
        return self.design.groups

    @property
    def spec(self) -> dict[str, Any]:
        """The design as written in a survey: RRreg's model name and exact ``p`` (as text)."""
        out: dict[str, Any] = {"model": self.design.model, "p": [_fraction_text(v) for v in self.design.p]}
        return out

    def to_json(self) -> dict[str, Any]:
        """The stored (canonical) definition."""
        out: dict[str, Any] = {"id": self.id, "text": self.text, "type": self.type, "design": self.spec}
        if self.allow_infinite_epsilon:
            out["allow_infinite_epsilon"] = True
        if self.unrelated_question is not None:
            out["unrelated_question"] = self.unrelated_question
        return out

    def public_json(self) -> dict[str, Any]:
        """As devices get it: the exact channel config of each group (epsilon ``None`` where infinite)."""
        channels = []
        for g in range(1, self.groups + 1):
            config = self.design.channel(g).to_config()
            if not math.isfinite(config["epsilon"]):
                config["epsilon"] = None
            channels.append(config)
        return {
            **self.to_json(),
            "categories": [False, True],
            "randomized": True,
            "epsilon": self.epsilon if math.isfinite(self.epsilon) else None,
            "reveals_truth": not math.isfinite(self.epsilon),
            "groups": self.groups,
            "channels": channels,
            "mechanism": self.design.to_config(),
        }

    # ---------------------------------------------------------------- reports
    def reports_from_json(self, values: Sequence[Any]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """``(group, answer)`` of each report; :class:`ReportError` names the first bad one."""
        n = len(values)
        if self.groups == 1:
            if not all(type(v) is bool for v in values):
                i, bad = next((i, v) for i, v in enumerate(values) if type(v) is not bool)
                raise ReportError(f"must be true or false ({self.design.model}); got {bad!r:.60}", i)
            return np.ones(n, dtype=np.int64), np.array(values, dtype=bool).reshape(n)
        groups = np.empty(n, dtype=np.int64)
        answers = np.empty(n, dtype=bool)
        shape = '{"group": 1 or 2, "answer": true or false}'
        for i, v in enumerate(values):
            if not isinstance(v, dict):
                raise ReportError(f"must be {shape} ({self.design.model} has two groups); got {v!r:.60}", i)
            extra = sorted(set(v) - {"group", "answer"})
            if extra:
                raise FieldReportError(f"is not a field of a {self.design.model} report {shape}", i, f".{extra[0]}")
            if "group" not in v:
                raise FieldReportError(
                    f"is missing: {self.design.model} is a two-group design, so a report names its group (1 or 2)",
                    i, ".group",
                )
            g = v["group"]
            if type(g) is not int or g not in (1, 2):
                raise FieldReportError(f"must be 1 or 2 ({self.design.model}); got {g!r:.60}", i, ".group")
            a = v.get("answer")
            if type(a) is not bool:
                raise FieldReportError(f"must be true or false; got {a!r:.60}", i, ".answer")
            groups[i], answers[i] = g, a
        return groups, answers

    def reports_to_json(self, checked: tuple[NDArray[np.int64], NDArray[np.bool_]]) -> list[Any]:
        groups, answers = checked
        if self.groups == 1:
            return [bool(a) for a in answers.tolist()]
        return [{"group": g, "answer": a} for g, a in zip(groups.tolist(), answers.tolist(), strict=True)]

    # -------------------------------------------------------------- aggregate
    def _key(self) -> str:
        return f"design:{self.id}:{self.design.model}:{','.join(self.spec['p'])}"

    def empty_aggregate(self) -> Tally:
        """Counts ``[group, answer]``, and per plain categorical question ``[category, group, answer]``."""
        arrays = {"counts": np.zeros((self.groups, 2), dtype=np.int64)}
        for qid, k in self.by:
            arrays[f"by:{qid}"] = np.zeros((k, self.groups, 2), dtype=np.int64)
        return Tally(self._key(), arrays)

    def aggregate_from_json(self, data: Mapping[str, Any]) -> Tally:
        return Tally.from_json(data, self.empty_aggregate())

    def aggregate(self, checked: Mapping[str, Any], rows: Sequence[int] | None) -> Tally:
        """The tally of the responses ``rows`` (all if ``None``) of a checked request."""
        groups, answers = checked[self.id]
        at = slice(None) if rows is None else np.asarray(rows, dtype=np.int64)
        code = (groups[at] - 1) * 2 + answers[at]
        cells = 2 * self.groups
        arrays: dict[str, NDArray[np.int64]] = {
            "counts": np.bincount(code, minlength=cells).reshape(self.groups, 2)
        }
        for qid, k in self.by:
            by = np.bincount(checked[qid][at] * cells + code, minlength=k * cells)
            arrays[f"by:{qid}"] = by.reshape(k, self.groups, 2)
        return Tally(self._key(), {name: a.astype(np.int64) for name, a in arrays.items()})


def _check_channels(d: Design, field: str) -> None:
    """Each group's device channel must be one that every device builds from its config.

    The one rule, shared by the server, the Python client and the browser
    (deniable.js): a channel config is accepted exactly when
    ``dn.from_config`` accepts it, which refuses a channel whose answer never
    depends on the truth (e.g. UQTunknown's coin with ``p_g = 0``).
    """
    for g in range(1, d.groups + 1):
        try:
            channel = d.channel(g)  # a design question is yes/no: forced response with m categories has none
        except ValueError as exc:
            raise SurveyError(field, f"{d.model}: {exc}") from None
        try:
            from_config(channel.to_config())
        except ValueError as exc:
            where = f"group {g}'s" if d.groups > 1 else "its"
            raise SurveyError(
                field, f"{d.model}: {where} device channel (P(yes | non-carrier), P(yes | carrier)) = "
                       f"({channel.p_yes_given_no}, {channel.p_yes_given_yes}) is refused by every "
                       f"device: {exc}",
            ) from None


_DESIGN_KEYS = frozenset({"id", "text", "type", "design", "allow_infinite_epsilon", "unrelated_question"})


def load_design_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> DesignQuestion:
    """A design question from its definition (``where`` is the path prefix, e.g. ``questions[0].``)."""
    extra = sorted(set(data) - _DESIGN_KEYS)
    if extra:
        raise SurveyError(
            f"{where}{extra[0]}", f"is not a field of a design question (allowed: {sorted(_DESIGN_KEYS)})"
        )
    if data.get("type") != "yes-no":
        raise SurveyError(f"{where}type", f"a design question is yes-no; got {data.get('type')!r:.60}")
    spec = data["design"]
    if not isinstance(spec, dict):
        raise SurveyError(f"{where}design", f"must be an object {{model: ..., p: [...]}}; got {spec!r:.60}")
    unknown = sorted(set(spec) - {"model", "p"})
    if unknown:
        raise SurveyError(f"{where}design.{unknown[0]}", "is not a field of a design (allowed: model, p)")
    model = spec.get("model")
    if model not in MODELS:
        raise SurveyError(f"{where}design.model", f"must be one of {sorted(MODELS)}; got {model!r:.60}")
    if "p" not in spec:
        raise SurveyError(f"{where}design.p", f"is required ({model}'s randomization probabilities, as RRreg's p)")
    p = spec["p"]
    values = p if isinstance(p, list) else [p]
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise SurveyError(f"{where}design.p[{i}]", f"must be a number or a fraction like '1/6'; got {v!r:.60}")
    try:
        d = design(model, p)
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise SurveyError(f"{where}design.p", f"{model}: {exc}") from None
    _check_channels(d, f"{where}design.p")
    allow = data.get("allow_infinite_epsilon", False)
    if not isinstance(allow, bool):
        raise SurveyError(f"{where}allow_infinite_epsilon", f"must be true or false; got {allow!r:.60}")
    unrelated = data.get("unrelated_question")
    if model == "UQTunknown":
        if not isinstance(unrelated, str) or not unrelated.strip():
            raise SurveyError(
                f"{where}unrelated_question",
                "is required by UQTunknown: the text of the unrelated question the respondent answers "
                "on the device (its answer is never sent)",
            )
    elif unrelated is not None:
        raise SurveyError(f"{where}unrelated_question", f"applies to UQTunknown only; this design is {model}")
    return DesignQuestion(qid, text, d, allow, unrelated)


# ----------------------------------------------------------- plain questions
@dataclass(frozen=True)
class PlainQuestion:
    """A question answered as is (``randomized: false``): an integer in a range, or a category."""

    id: str
    text: str
    type: str  # "integer" or "categorical"
    categories: tuple[Any, ...] = ()
    min: int = 0
    max: int = 0
    randomized: bool = False
    epsilon: float = 0.0  # nothing is randomized; the answer is disclosed as given

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

    def aggregate(self, checked: Mapping[str, Any], rows: Sequence[int] | None) -> Tally:
        values = checked[self.id] if rows is None else checked[self.id][np.asarray(rows, dtype=np.int64)]
        position = values - self.min if self.type == "integer" else values
        counts = np.bincount(position, minlength=len(self.values)).astype(np.int64)
        return Tally(self._key(), {"counts": counts})


_PLAIN_KEYS = frozenset({"id", "text", "type", "randomized", "categories", "min", "max"})
PLAIN_TYPES = ("integer", "categorical")


def load_plain_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> PlainQuestion:
    """A plain (not randomized) question from its definition."""
    extra = sorted(set(data) - _PLAIN_KEYS)
    if extra:
        raise SurveyError(
            f"{where}{extra[0]}",
            f"is not a field of a plain question (randomized: false; allowed: {sorted(_PLAIN_KEYS)})",
        )
    qtype = data.get("type")
    if qtype not in PLAIN_TYPES:
        raise SurveyError(f"{where}type", f"a plain question is one of {list(PLAIN_TYPES)}; got {qtype!r:.60}")
    if qtype == "integer":
        bounds = []
        for key in ("min", "max"):
            v = data.get(key)
            if type(v) is not int:
                raise SurveyError(f"{where}{key}", f"an integer question needs an integer {key}; got {v!r:.60}")
            bounds.append(v)
        low, high = bounds
        if not 0 <= high - low < MAX_INTEGER_RANGE:
            raise SurveyError(
                f"{where}max", f"must be at least min and give at most {MAX_INTEGER_RANGE} values; got {low}..{high}"
            )
        if "categories" in data:
            raise SurveyError(f"{where}categories", "an integer question has min and max, not categories")
        return PlainQuestion(qid, text, "integer", min=low, max=high)
    categories = data.get("categories")
    if not isinstance(categories, list) or len(categories) < 2:
        raise SurveyError(f"{where}categories", f"needs a list of at least 2 categories; got {categories!r:.60}")
    for i, c in enumerate(categories):
        if isinstance(c, bool) or not isinstance(c, (str, int)):
            raise SurveyError(f"{where}categories[{i}]", f"must be a string or an integer; got {c!r:.60}")
    if len(set(categories)) != len(categories):
        raise SurveyError(f"{where}categories", f"has duplicates: {categories!r:.200}")
    for key in ("min", "max"):
        if key in data:
            raise SurveyError(f"{where}{key}", "applies to integer questions only")
    return PlainQuestion(qid, text, "categorical", categories=tuple(categories))
