"""A randomized-response survey design as a randomizer: the :class:`Design` base class.

Every design is a :class:`~deniable.mechanisms._contract.Mechanism` with the
wire id ``"rr-design"``: RRreg's model name and the exact ``p`` (fractions as
text, ``"1/6"``) travel in the configuration's ``params``, so
``dn.from_config(d.to_config()) == d`` and a device randomizes with exactly
the probabilities the analyst models::

    {"format": "deniable.mechanism", "version": 1, "mechanism": "rr-design",
     "domain": [false, true], "epsilon": 1.6094379124341003,
     "params": {"model": "FR", "p": ["1/6", "1/6"]}}

A respondent's true value is ``False``/``True`` (non-carrier or carrier; the
categories ``0..m-1`` for forced response with m categories). Reports:

* one-group yes/no designs: ``false``/``true``;
* several answers (forced response with m categories, Kuk with several
  cards): the answer ``r`` as an integer;
* two-group designs: ``{"group": g, "answer": a}``. On the device the group is
  drawn uniformly (``privatize_many`` without ``group``) and travels with the
  answer; with ``group`` given (simulation) only the answers are returned.

The aggregate is :class:`~deniable._aggregates.SupportCounts` of the answer
cells ``(g - 1) * R + r`` (R answers per group), so ``counts[g - 1, r]`` of
:func:`~deniable.survey.prevalence_from_counts` is its ``counts`` reshaped.

**One orientation.** :meth:`Design.transition_matrix` is ``[x, y] =
P(report y | truth x)``, as every mechanism's, over all latent states
(cheaters too); :meth:`Design.matrix` is its transpose, RRreg's ``getPW``,
kept only for comparing with RRreg.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, ClassVar, cast

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts, tallied_counts
from deniable.errors import FieldReportError, ReportError
from deniable.mechanisms._binary import BinaryRR
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms.registry import register

__all__ = ["Design", "TWO_GROUP_REPORT"]

TWO_GROUP_REPORT = np.dtype([("group", np.uint8), ("answer", np.bool_)])
"""The numpy form of a two-group design's report (``{"group": g, "answer": a}`` on the wire)."""


def probabilities(p: object, count: int | None, model: str, meaning: str) -> tuple[Fraction, ...]:
    """``p`` as exact fractions, ``count`` of them (None: any number), checked in [0, 1]."""
    if isinstance(p, (int, float, Fraction, str, np.floating)):
        values: tuple[object, ...] = (p,)
    else:
        try:
            values = tuple(cast(Iterable[object], p))
        except TypeError:
            raise TypeError(f"p must be a number or a sequence of numbers for {model}; got {p!r}") from None
    if count is not None and len(values) != count:
        raise ValueError(
            f"p must have {count} value{'s' if count > 1 else ''} for {model} ({meaning}); got {len(values)}"
        )
    return tuple(privacy.exact_probability(v, "p", model) for v in values)


@register(kind="design", decode_cost="O(n) answer counts + a 1- or 2-parameter fit", browser=True)
class Design(Mechanism):
    """A randomized-response design: device-side randomization and the likelihood of its answers.

    Subclasses set ``model`` (RRreg's name), ``extra`` (the name of the
    estimated extra parameter of a two-group design) and implement the
    model probabilities :meth:`response_probabilities`; each registers
    itself by ``model`` for :meth:`from_config <deniable.wire.from_config>`.
    """

    wire_id = "rr-design"
    stat_type = SupportCounts
    model: ClassVar[str]
    extra: ClassVar[str | None] = None
    groups: ClassVar[int] = 1
    states: ClassVar[tuple[str, ...]] = ("non-carrier", "carrier")
    needs_unrelated: ClassVar[bool] = False  # the respondent's own answer to an unrelated question
    m: int = 2  # categories of the truth (forced response may have more)
    cards: int = 1  # cards drawn (Kuk)

    p: tuple[Fraction, ...]
    _models: ClassVar[dict[str, type[Design]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "model" in cls.__dict__:
            Design._models[cls.model] = cls

    # ----------------------------------------------------------- the model
    @property
    def responses(self) -> tuple[int, ...]:
        """The possible answers: 0 ("no") and 1 ("yes") unless the design says otherwise."""
        return (0, 1)

    @property
    def param_names(self) -> tuple[str, ...]:
        """The estimated parameters: ``"pi"`` (the prevalence), then the extra one."""
        return ("pi",) if self.extra is None else ("pi", self.extra)

    @abstractmethod
    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        """``P(response r)`` for each answer r, in a group, given the parameters."""

    def transition_matrix(self, group: int = 1, extra: float | None = None) -> NDArray[np.float64]:
        """``[x, y] = P(report y | truth x)`` in ``group``, as floats: the orientation of every mechanism.

        Rows are the latent states (:attr:`states`), columns the answers
        (:attr:`responses`); each row sums to 1. Two-group designs whose
        matrix involves the extra parameter (``t``, ``piUQ``) need it as ``extra``.
        """
        self._check_group(group)
        if self.extra is not None and extra is None and self._matrix_needs_extra:
            raise ValueError(f"{self.model}'s matrix depends on {self.extra}: pass extra=")
        return np.vstack(
            [self.response_probabilities(self._state_params(j, extra), group) for j in range(len(self.states))]
        )

    def matrix(self, group: int = 1, extra: float | None = None) -> NDArray[np.float64]:
        """RRreg's ``getPW``: ``P[r, j] = P(response r | state j)``, the transpose of :meth:`transition_matrix`.

        For comparing with RRreg only; deniable's code and docs use
        :meth:`transition_matrix`.
        """
        return self.transition_matrix(group, extra).T

    def _state_params(self, state: int, extra: float | None) -> dict[str, float]:
        """Parameters under which a respondent is in ``state`` for sure (a column of the matrix)."""
        params = {"pi": float(state == 1)}
        if self.extra is not None:
            params[self.extra] = float(state == 2) if self.extra == "gamma" else float(extra or 0.0)
        return params

    _matrix_needs_extra: ClassVar[bool] = False

    # ---------------------------------------------------------- the device
    @abstractmethod
    def channel(self, group: int = 1) -> BinaryRR:
        """The exact binary channel a compliant respondent's device samples with, in ``group``."""

    @property
    def mechanism(self) -> BinaryRR:
        """The one-group design's channel: what a device and the collection server use."""
        if self.groups != 1:
            raise ValueError(f"{self.model} has two groups: use channel(group) for group 1 or 2")
        return self.channel(1)

    @property
    def epsilon(self) -> float:
        """Local-DP epsilon of one compliant answer (the worst group); ``inf`` if an answer reveals the truth."""
        return max(self.channel(g).epsilon for g in range(1, self.groups + 1))

    def privatize_many(  # type: ignore[override]
        self, truth: Any, group: Any = None, rng: randomness.RNGLike = None, unrelated: Any = None
    ) -> NDArray[Any]:
        """Randomize compliant respondents' true states on the device: one report per respondent.

        ``truth`` holds booleans (or 0/1): carrier or not (the categories
        ``0..m-1`` for forced response with m categories). A two-group design
        without ``group`` draws each respondent's group uniformly (the
        device's way) and returns reports that carry it
        (:data:`TWO_GROUP_REPORT`); with ``group`` (1 or 2 per respondent,
        for simulation) it returns the answers only. UQTunknown needs each
        respondent's own ``unrelated`` answer, or ``truth`` as
        ``{"answer": bool, "unrelated": bool}`` per respondent. ``rng=None``
        uses the OS CSPRNG with exact integer thresholds; a seed or Generator
        is for simulation only.
        """
        truth, unrelated = self._split_answers(truth, unrelated)
        states = self._truth(truth)
        source = randomness.resolve(rng)
        drawn = group is None and self.groups > 1
        if drawn:
            groups = randomness.uniform_below(self.groups, states.size, source).astype(np.int64) + 1
        else:
            groups = self.check_groups(group, states.size)
        answers = self._randomize(states, groups, source, unrelated)
        if not drawn:
            return answers
        out = np.empty(states.size, dtype=TWO_GROUP_REPORT)
        out["group"], out["answer"] = groups, answers
        return out

    def privatize(  # type: ignore[override]
        self, truth: Any, group: int | None = None, rng: randomness.RNGLike = None, unrelated: Any = None
    ) -> Any:
        """One respondent's report (secure randomness unless ``rng`` is given)."""
        other = None if unrelated is None else [unrelated]
        out = self.privatize_many([truth], None if group is None else [group], rng, other)
        return out[0] if out.dtype.names else out[0].item()

    def _randomize(
        self, states: NDArray[Any], groups: NDArray[np.int64], source: randomness.Source, unrelated: Any
    ) -> NDArray[Any]:
        """The answers of respondents in ``states`` and ``groups`` (each group's exact channel)."""
        out = np.empty(states.size, dtype=bool)
        for g in range(1, self.groups + 1):
            at = np.flatnonzero(groups == g) if self.groups > 1 else slice(None)
            out[at] = self.channel(g).privatize_many(states[at], rng=source)
        return out

    def _split_answers(self, truth: Any, unrelated: Any) -> tuple[Any, Any]:
        """``{"answer": a, "unrelated": u}`` per respondent (UQTunknown) as the two answer lists."""
        if (not self.needs_unrelated or unrelated is not None or not isinstance(truth, (list, tuple))
                or not truth or not isinstance(truth[0], Mapping)):
            return truth, unrelated
        if not all(isinstance(v, Mapping) and set(v) == {"answer", "unrelated"} for v in truth):
            bad = next(v for v in truth if not (isinstance(v, Mapping) and set(v) == {"answer", "unrelated"}))
            raise ValueError(
                f"each answer must be {{'answer': bool, 'unrelated': bool}} for {self.model} (the unrelated "
                f"answer stays on the device); got {bad!r:.60}"
            )
        return [v["answer"] for v in truth], [v["unrelated"] for v in truth]

    # ------------------------------------------------------------- checks
    def _truth(self, truth: Any) -> NDArray[Any]:
        """True states, checked: booleans (or 0/1), or the categories ``0..m-1`` of a design with more."""
        arr = np.asarray(truth)
        if self.m > 2:
            ok = arr.ndim == 1 and (
                arr.size == 0 or arr.dtype.kind in "iu" and bool(np.all((arr >= 0) & (arr < self.m)))
            )
            if not ok:
                raise ValueError(
                    f"truth must be 1-D categories 0..{self.m - 1} for {self.model} with {self.m} categories"
                )
            return arr.astype(np.int64)
        if arr.ndim != 1:
            raise ValueError(f"truth must be a 1-D array of booleans for {self.model}; got shape {arr.shape}")
        if arr.dtype == np.bool_:
            return arr
        if arr.size and (arr.dtype.kind not in "iuf" or not np.isin(arr, (0, 1)).all()):
            bad = next(v for v in arr.tolist() if v not in (0, 1) or isinstance(v, float) and math.isnan(v))
            raise ValueError(f"truth must be booleans (or 0/1) for {self.model}; got {bad!r}")
        return arr.astype(bool)

    def _check_group(self, group: int) -> None:
        if group not in range(1, self.groups + 1):
            allowed = "1" if self.groups == 1 else "1 or 2"
            raise ValueError(f"group must be {allowed} for {self.model}; got {group!r}")

    def check_groups(self, group: Any, n: int) -> NDArray[np.int64]:
        """The group of each of ``n`` respondents (1 or 2), checked; all 1 for a one-group design."""
        if self.groups == 1:
            if group is not None and not np.all(np.asarray(group) == 1):
                raise ValueError(f"{self.model} has one group; group must be None (or all 1)")
            return np.ones(n, dtype=np.int64)
        if group is None:
            raise ValueError(f"{self.model} is a two-group design: group (1 or 2 per respondent) is required")
        arr = np.asarray(group)
        if arr.shape != (n,):
            raise ValueError(f"group must have one entry per respondent ({n}); got shape {arr.shape}")
        ok = np.isin(arr, (1, 2)) if arr.dtype.kind in "iuf" else np.zeros(n, dtype=bool)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"group must be 1 or 2 for {self.model}; got {arr[i].item()!r} at position {i}")
        return arr.astype(np.int64)

    # ------------------------------------------------------------ the wire
    @property
    def domain(self) -> tuple[Any, ...]:
        """The true values a device takes: ``(False, True)``, or the categories ``0..m-1``."""
        return tuple(self._domain_json())

    @property
    def report_kind(self) -> str:  # type: ignore[override]
        """``"bool"`` (one-group yes/no), ``"int"`` (several answers) or ``"structured"`` (two groups)."""
        if self.groups > 1:
            return "structured"
        return "bool" if self.responses == (0, 1) else "int"

    @property
    def report_bits(self) -> int:
        """Bits of a report: the answer, and the group of a two-group design."""
        return max(1, math.ceil(math.log2(len(self.responses)))) + (self.groups > 1)

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "p": [str(v) for v in self.p]}
        if self.cards != 1:
            params["cards"] = self.cards
        return params

    def _domain_json(self) -> Any:
        return [False, True] if self.m == 2 else list(range(self.m))

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> Design:
        model = params["model"]
        if model not in Design._models:
            raise ValueError(f"config field 'params.model' must be one of {sorted(Design._models)}; got {model!r}")
        built = Design._models[model]._build(params)
        if domain != built._domain_json():
            raise ValueError(f"config field 'domain' must be {built._domain_json()} for {model}; got {domain!r:.60}")
        return built

    @classmethod
    def _build(cls, params: dict[str, Any]) -> Design:
        """The design of this model from its wire parameters (``p`` as exact fractions, Kuk's ``cards``)."""
        p = params["p"]
        if not isinstance(p, list) or not all(isinstance(v, str) for v in p):
            raise ValueError(f"config field 'params.p' must be a list of exact fractions as text; got {p!r:.60}")
        return cls(p, **({"cards": params["cards"]} if "cards" in params else {}))  # type: ignore[call-arg]

    def to_config(self) -> dict[str, Any]:
        """The versioned configuration; ``epsilon`` is ``null`` where an answer reveals the truth."""
        config = super().to_config()
        if not math.isfinite(config["epsilon"]):
            config["epsilon"] = None
        return config

    # -------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.int64]:
        """The answer cells ``(g - 1) * R + r`` of reports, checked.

        A bad report raises :class:`~deniable.errors.ReportError` with its
        ``index`` and a ``reason`` worded for that report alone
        (:class:`~deniable.errors.FieldReportError` with the ``subfield`` at
        fault, ``.group`` or ``.answer``, for a two-group design), which the
        collection server answers as they are.
        """
        if self.groups > 1:
            if isinstance(reports, np.ndarray) and reports.dtype.names:
                if set(reports.dtype.names) != {"group", "answer"} or reports.ndim != 1:
                    raise ValueError(f"{self.model} reports need the fields 'group' and 'answer'; got {reports.dtype}")
                items = [{"group": int(g), "answer": bool(a)} for g, a in reports.tolist()]
            else:
                items = list(reports)
            out = np.empty(len(items), dtype=np.int64)
            for i, v in enumerate(items):
                out[i] = self._two_group_cell(v, i)
            return out
        if isinstance(reports, np.ndarray):
            if reports.ndim != 1:
                raise ValueError(f"{self.model} reports must be a 1-D array; got shape {reports.shape}")
            if reports.dtype == np.bool_ and self.responses == (0, 1):
                return reports.astype(np.int64)
            values = reports.tolist()
        else:
            values = list(reports)
        if self.responses == (0, 1):
            for i, v in enumerate(values):
                if not isinstance(v, (bool, np.bool_)):
                    raise ReportError(f"{self.model} report {i} must be true or false; got {v!r:.60}", i,
                                      f"must be true or false ({self.model}); got {v!r:.60}")
            return np.array(values, dtype=bool).astype(np.int64).reshape(len(values))
        r = len(self.responses)
        for i, v in enumerate(values):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not 0 <= v < r:
                raise ReportError(f"{self.model} report {i} must be an integer answer in 0..{r - 1}; got {v!r:.60}", i,
                                  f"must be an integer answer in 0..{r - 1} ({self.model}); got {v!r:.60}")
        return np.asarray(values, dtype=np.int64).reshape(len(values))

    def _two_group_cell(self, v: Any, i: int) -> int:
        """The answer cell of report ``i`` of a two-group design, ``{"group": g, "answer": a}``."""
        shape = '{"group": 1 or 2, "answer": true or false}'
        message = f"{self.model} report {i} must be {{'group': 1 or 2, 'answer': true or false}}; got {v!r:.60}"
        if not isinstance(v, Mapping):
            raise ReportError(message, i, f"must be {shape} ({self.model} has two groups); got {v!r:.60}")
        extra = sorted(set(v) - {"group", "answer"}, key=str)
        if extra:
            raise FieldReportError(message, i, f".{extra[0]}", f"is not a field of a {self.model} report {shape}")
        if "group" not in v:
            raise FieldReportError(message, i, ".group", f"is missing: {self.model} is a two-group design, so a "
                                   "report names its group (1 or 2)")
        g, a = v["group"], v.get("answer")
        message = f"{self.model} report {i}: group must be 1 or 2 and answer true or false; got {v!r:.60}"
        if type(g) is not int or g not in (1, 2):
            raise FieldReportError(message, i, ".group", f"must be 1 or 2 ({self.model}); got {g!r:.60}")
        if not isinstance(a, (bool, np.bool_)):
            raise FieldReportError(message, i, ".answer", f"must be true or false; got {a!r:.60}")
        return (g - 1) * len(self.responses) + int(a)

    def _report_error(self, items: list[Any], exc: Exception) -> ReportError:
        """A report error :meth:`_validate` worded itself is answered as it is."""
        return exc if isinstance(exc, ReportError) else super()._report_error(items, exc)

    def _public(self, checked: NDArray[np.int64]) -> NDArray[Any]:
        r = len(self.responses)
        if self.groups > 1:
            out = np.empty(checked.size, dtype=TWO_GROUP_REPORT)
            out["group"], out["answer"] = checked // r + 1, (checked % r).astype(bool)
            return out
        return checked.astype(bool) if self.responses == (0, 1) else checked

    def _checked_to_json(self, checked: NDArray[np.int64]) -> list[Any]:
        public = self._public(checked)
        if self.groups > 1:
            return [{"group": g, "answer": a} for g, a in public.tolist()]
        return public.tolist()

    def _report_to_json(self, report: Any) -> Any:
        if isinstance(report, np.void):
            return {"group": int(report["group"]), "answer": bool(report["answer"])}
        return super()._report_to_json(report)

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[np.int64]) -> SupportCounts:
        """Counts of the answer cells, ``counts[(g - 1) * R + r]``."""
        cells = self.groups * len(self.responses)
        return SupportCounts(self.fingerprint, np.bincount(checked, minlength=cells).astype(np.int64), checked.size)

    def _aggregate_coded(self, cells: NDArray[np.int64], codes: NDArray[np.integer]) -> SupportCounts:
        """The answer cells' counts from the tallies of the column's distinct cells."""
        answers = self.groups * len(self.responses)
        return SupportCounts(self.fingerprint, tallied_counts(cells, codes, answers), int(codes.size))

    def answer_counts(self, stat: SupportCounts) -> NDArray[np.int64]:
        """``counts[g - 1, r]`` of an aggregate (what :func:`~deniable.survey.prevalence_from_counts` takes)."""
        stat.require(SupportCounts, self.fingerprint)
        return stat.counts.reshape(self.groups, len(self.responses))

    # ------------------------------------------------------------- identity
    def _p_text(self) -> str:
        return ", ".join(f"{float(v):.6g}" for v in self.p)

    def __repr__(self) -> str:
        eps = self.epsilon
        note = "" if math.isfinite(eps) else " -- an answer reveals the truth (no local-DP guarantee)"
        return f"{type(self).__name__}(model={self.model!r}, p=({self._p_text()}), epsilon={eps:.6g}{note})"
