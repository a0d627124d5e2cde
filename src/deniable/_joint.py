"""The joint distribution of two categorical questions, its marginals and a test of independence.

Two questions with categories ``A`` (``k1``) and ``B`` (``k2``) are answered
as one: the pair ``(a, b)`` is the category ``a * k2 + b`` of the product
domain (``K = k1 k2`` cells, row-major) and one frequency oracle at
``epsilon`` randomizes it, so the pair costs ``epsilon`` (not the sum of two).
The oracle is GRR or unary encoding (OUE, SUE), the ones whose reports'
covariance across cells has a closed form; ``"auto"`` takes the one with the
lower ``Var*`` at ``K`` and ``epsilon``.

Covariance (population target: the respondents are a sample of a
population with cell shares ``f``). With support indicators ``s_u`` of one
report, support rates ``lambda = q* + (p*-q*) f`` and ``g = p* - q*``, the
debiased cells ``f^ = (C/n - q*) / g`` have
``Cov(f^_u, f^_v) = Cov(s_u, s_v) / (n g^2)`` with

* GRR (a report supports exactly one cell; ``C`` is multinomial):
  ``Cov(s_u, s_v) = lambda_u (1{u=v} - lambda_v)``, plugged in at ``lambda^ = C/n``;
* unary encoding (bits independent given the value):
  ``Cov(s_u, s_v) = -g^2 f_u f_v`` for ``u != v`` (so ``Cov(f^_u, f^_v) = -f_u f_v / n``)
  and ``lambda_u (1 - lambda_u)`` on the diagonal, plugged in at ``lambda^ = C/n``
  and ``f^`` clipped to [0, 1].

Marginals are sums of cells, ``m = M f^`` with covariance ``M Cov M^T``;
each is unbiased.

Independence (:meth:`JointEstimate.independence`) is a **Wald test** on the
debiased joint frequencies: the ``(k1 - 1)(k2 - 1)`` contrasts
``r_ab = f_ab - f_a. f_.b`` (``a < k1-1``, ``b < k2-1``) are 0 under
independence; with their Jacobian ``J`` (``dr_ab / df_cd = 1{(c,d)=(a,b)}
- 1{c=a} f_.b - 1{d=b} f_a.``) the statistic ``W = r^T (J Cov J^T)^-1 r``
is asymptotically chi-square with ``(k1 - 1)(k2 - 1)`` degrees of freedom.
Why Wald and not Pearson's chi-square or a likelihood ratio: Pearson's
statistic on the randomized reports tests the wrong hypothesis (mixing the
cells with the randomization's uniform noise makes an independent table
dependent) and on the debiased table ignores the randomization's variance
(its size would be far above the level); a likelihood ratio needs the
reports' likelihood under the independence model fitted numerically, which
is multinomial only for GRR. The Wald test needs only the unbiased estimate
and its covariance, has the same chi-square limit, and its size and power
are checked by simulation in the test suite.

>>> import numpy as np
>>> j = Joint(["yes", "no"], ["A", "B", "C"], epsilon=3.0)
>>> rng = np.random.default_rng(0)
>>> first = rng.choice(["yes", "no"], 20_000)
>>> second = np.where(first == "yes", rng.choice(["A", "B"], 20_000), "C")   # dependent
>>> est = j.estimate(j.privatize_many(first, second, rng=rng))
>>> est.independence().p_value < 1e-6
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _intervals as intervals
from deniable import _randomness as randomness
from deniable import wire
from deniable._aggregates import SupportCounts
from deniable._estimate import Estimate, check_target
from deniable._privacy import check_epsilon
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.mechanisms import GRR, OUE, SUE, FrequencyOracle
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._domain import Domain
from deniable.mechanisms.registry import register

__all__ = ["Joint", "JointEstimate", "MarginalEstimate", "IndependenceTest", "JOINT_MECHANISMS"]

JOINT_MECHANISMS: dict[str, Callable[..., FrequencyOracle]] = {"grr": GRR, "oue": OUE, "sue": SUE}
"""The oracles whose cell covariance has a closed form (module docstring)."""
_PAIRS: Any = object()  # privatize's ``second`` when ``first`` holds the pairs


def _split_pairs(pairs: Any) -> tuple[list[Any], list[Any]]:
    """The first and second answers of a sequence of pairs ``(a, b)``; ValueError naming one that is not a pair."""
    if isinstance(pairs, np.ndarray) and pairs.ndim == 2 and pairs.shape[1] == 2:
        return pairs[:, 0].tolist(), pairs[:, 1].tolist()
    if isinstance(pairs, (str, bytes)):
        raise ValueError(f"pairs must be a sequence of pairs (first, second); got {pairs!r:.60}")
    items = list(pairs)
    for i, pair in enumerate(items):
        if not isinstance(pair, (tuple, list, np.ndarray)) or len(pair) != 2:
            raise ValueError(f"pairs[{i}] must be a pair (first, second); got {pair!r:.60}")
    return [p[0] for p in items], [p[1] for p in items]


@dataclass(frozen=True)
class MarginalEstimate(Result):
    """One question's shares from the joint estimate: unbiased, with standard errors (population)."""

    domain: tuple[Any, ...]
    frequencies: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    n: int

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-category normal interval ``f ± z SE`` at ``confidence_level`` (``ci`` is its older spelling)."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per category: ``estimate``, ``std_error``, ``ci_low``, ``ci_high``."""
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.frequencies, "std_error": self.std_errors, "ci_low": low, "ci_high": high}
        return ResultTable({"n": self.n, "target": "population"}, columns, "category", self.domain, "categories")


@dataclass(frozen=True)
class IndependenceTest:
    """Wald test that the two questions are independent (module docstring)."""

    statistic: float
    df: int
    p_value: float
    method: str = "wald"

    def __repr__(self) -> str:
        return f"IndependenceTest(wald W={self.statistic:.4g}, df={self.df}, p={self.p_value:.4g})"


@dataclass(frozen=True, eq=False)
class JointEstimate(Result):
    """The debiased joint shares of two questions, their covariance, marginals and independence test.

    ``cells`` is the product-domain :class:`~deniable.Estimate` (population
    target); ``covariance`` the ``K x K`` covariance of its frequencies. Its
    intervals, ``to_dict`` and ``to_frame`` are the cells', labelled by the
    pair of answers (``(a, b)``, row-major).
    """

    first: tuple[Any, ...]
    second: tuple[Any, ...]
    cells: Estimate
    covariance: NDArray[np.float64]

    ci_methods: ClassVar[tuple[str, ...]] = Estimate.ci_methods

    @property
    def std_errors(self) -> NDArray[np.float64] | None:
        """The cells' standard errors (the square roots of the diagonal of :attr:`covariance`)."""
        return self.cells.std_errors

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """The cells' intervals (:meth:`deniable.Estimate.confidence_interval`), row-major."""
        return self.cells.confidence_interval(confidence_level, method)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """The cells' table, each cell labelled by its pair ``(a, b)``; both questions' categories in the fields."""
        cells = self.cells._table(confidence_level, method)
        pairs = [(a, b) for a in self.first for b in self.second]
        fields = {**cells.fields, "first": list(self.first), "second": list(self.second)}
        return ResultTable(fields, cells.columns, "cell", pairs, "cells")

    def _caption(self) -> str:
        return f"{self.cells._caption()}: {len(self.first)} x {len(self.second)} cells"

    @property
    def n(self) -> int:
        return self.cells.n

    @property
    def table(self) -> NDArray[np.float64]:
        """The estimated shares as a ``k1 x k2`` table (rows: the first question)."""
        return self.cells.frequencies.reshape(len(self.first), len(self.second))

    def marginal(self, which: int) -> MarginalEstimate:
        """The first (``which=0``) or second (``1``) question's shares: sums of the joint cells."""
        if which not in (0, 1):
            raise ValueError(f"which must be 0 (the first question) or 1 (the second); got {which!r}")
        k1, k2 = len(self.first), len(self.second)
        cell = np.arange(k1 * k2)
        rows = cell // k2 if which == 0 else cell % k2
        size = k1 if which == 0 else k2
        summing = np.zeros((size, k1 * k2))
        summing[rows, cell] = 1.0
        cov = summing @ self.covariance @ summing.T
        return MarginalEstimate(
            self.first if which == 0 else self.second,
            summing @ self.cells.frequencies,
            np.sqrt(np.maximum(np.diag(cov), 0.0)),
            self.n,
        )

    def independence(self) -> IndependenceTest:
        """Wald test of independence of the two questions, ``(k1-1)(k2-1)`` degrees of freedom."""
        from scipy import stats

        k1, k2 = len(self.first), len(self.second)
        f = self.table
        rows, cols = f.sum(axis=1), f.sum(axis=0)
        grid = np.meshgrid(np.arange(k1 - 1), np.arange(k2 - 1), indexing="ij")
        a, b = grid[0].ravel(), grid[1].ravel()
        contrasts = f[a, b] - rows[a] * cols[b]
        partial = np.zeros((a.size, k1, k2))
        index = np.arange(a.size)
        partial[index, a, b] += 1.0
        partial[index, a, :] -= cols[b][:, None]
        partial[index, :, b] -= rows[a][:, None]
        jac = partial.reshape(a.size, k1 * k2)
        middle = jac @ self.covariance @ jac.T
        statistic = float(contrasts @ np.linalg.pinv(middle, hermitian=True) @ contrasts)
        df = (k1 - 1) * (k2 - 1)
        return IndependenceTest(statistic, df, float(stats.chi2.sf(statistic, df)))


@register(kind="joint", decode_cost="O(n) support counts of k1 k2 cells")
class Joint(Mechanism):
    """Two categorical questions randomized as one pair by an oracle on their product domain.

    ``Joint(first, second, epsilon=..., mechanism="auto")``: ``first`` and
    ``second`` are the two questions' categories; ``mechanism`` one of
    ``"auto"``, ``"grr"``, ``"oue"``, ``"sue"``. The pair's privacy loss is the
    oracle's ``epsilon`` (:attr:`epsilon`).

    A :class:`~deniable.mechanisms._contract.Mechanism` with the wire id
    ``"joint"``: its configuration's ``domain`` is the two questions'
    categories and its ``params`` the oracle's own configuration (on the cells
    ``0..k1 k2 - 1``), so ``dn.from_config(j.to_config()) == j``::

        {"format": "deniable.mechanism", "version": 1, "mechanism": "joint",
         "domain": [["yes", "no"], ["A", "B", "C"]], "epsilon": 3.0,
         "params": {"oracle": {"mechanism": "grr", "domain": 6, ...}}}

    A true value is a pair ``(a, b)``; reports, their JSON and the aggregate
    (:class:`~deniable._aggregates.SupportCounts` of the cells) are the
    oracle's, and the estimate is a :class:`JointEstimate`.
    """

    wire_id = "joint"
    stat_type = SupportCounts

    def __init__(
        self, first: Sequence[Any], second: Sequence[Any], *, epsilon: float, mechanism: str = "auto"
    ) -> None:
        self._first = Domain(first, "Joint")
        self._second = Domain(second, "Joint")
        cells = self._first.k * self._second.k
        eps = check_epsilon(epsilon, owner="Joint")
        if mechanism == "auto":
            built = [cls(cells, epsilon=eps) for cls in (GRR, OUE)]
            self.mechanism: FrequencyOracle = min(built, key=lambda m: float(m.variance(1)[0]))
        elif mechanism in JOINT_MECHANISMS:
            self.mechanism = JOINT_MECHANISMS[mechanism](cells, epsilon=eps)
        else:
            raise ValueError(f"mechanism must be one of {['auto', *JOINT_MECHANISMS]}; got {mechanism!r}")

    @property
    def first(self) -> tuple[Any, ...]:
        return tuple(self._first.values)

    @property
    def second(self) -> tuple[Any, ...]:
        return tuple(self._second.values)

    @property
    def domain(self) -> tuple[tuple[Any, Any], ...]:
        """The true values a device takes: the pairs ``(a, b)``, row-major (cell ``a * k2 + b``)."""
        return tuple((a, b) for a in self.first for b in self.second)

    @property
    def epsilon(self) -> float:
        return float(self.mechanism.epsilon)

    @property
    def report_bits(self) -> int:
        return int(self.mechanism.report_bits)

    @property
    def report_kind(self) -> str:  # type: ignore[override]
        """The oracle's reports (a cell for GRR, packed bits for unary encoding)."""
        return self.mechanism.report_kind

    def cell(self, first: Any, second: Any) -> int:
        """The product-domain category of one pair: ``a * k2 + b``."""
        return self._first.encode_one(first) * self._second.k + self._second.encode_one(second)

    # ------------------------------------------------------------ privatize
    def privatize_many(  # type: ignore[override]
        self, first: Any, second: Any = _PAIRS, rng: randomness.RNGLike = None
    ) -> Any:
        """Randomize many pairs ``(first[i], second[i])``, or ``first`` as a sequence of pairs ``(a, b)``;
        secure randomness unless ``rng`` is given."""
        if second is _PAIRS:
            first, second = _split_pairs(first)
        a, b = self._first.encode(first), self._second.encode(second)
        if a.shape != b.shape:
            raise ValueError(f"first and second need the same length; got {a.size} and {b.size}")
        return self.mechanism.privatize_many(a * self._second.k + b, rng=rng)

    def privatize(  # type: ignore[override]
        self, first: Any, second: Any = _PAIRS, rng: randomness.RNGLike = None
    ) -> Any:
        """Randomize one respondent's pair of answers (``first, second``, or ``first`` a pair ``(a, b)``)."""
        if second is _PAIRS:
            (first,), (second,) = _split_pairs([first])
        return self.mechanism.privatize(self.cell(first, second), rng=rng)

    # ----------------------------------------------------------------- wire
    def _domain_json(self) -> Any:
        return [self._first.to_json(), self._second.to_json()]

    def _domain_key(self) -> Any:
        return (self._first, self._second)

    def _params(self) -> dict[str, Any]:
        return {"oracle": self.mechanism.to_config()}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> Joint:
        if not (isinstance(domain, list) and len(domain) == 2
                and all(isinstance(d, (list, int)) and not isinstance(d, bool) for d in domain)):
            raise ValueError(
                f"config field 'domain' must be the two questions' categories for joint; got {domain!r:.60}"
            )
        self = cls.__new__(cls)
        self._first, self._second = Domain(domain[0], "Joint"), Domain(domain[1], "Joint")
        oracle = wire.from_config(params["oracle"])
        cells = self._first.k * self._second.k
        if type(oracle) not in JOINT_MECHANISMS.values() or not (oracle.domain_obj.is_range and oracle.k == cells):
            raise ValueError(
                f"config field 'params.oracle' must configure one of {list(JOINT_MECHANISMS)} on the {cells} cells "
                f"0..{cells - 1}; got {oracle!r:.60}"
            )
        self.mechanism = oracle
        return self

    # -------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[Any]:
        return self.mechanism._validate(reports)

    def _public(self, checked: NDArray[Any]) -> NDArray[Any]:
        return self.mechanism._public(checked)

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        return self.mechanism._reports_from_json(items)

    def _report_to_json(self, report: Any) -> Any:
        return self.mechanism._report_to_json(report)

    def _checked_to_json(self, checked: NDArray[Any]) -> list[Any]:
        return self.mechanism._checked_to_json(checked)

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> SupportCounts:
        """The oracle's mergeable support counts of the product domain, stamped with this configuration."""
        stat: SupportCounts = self.mechanism._aggregate_checked(checked)
        return SupportCounts(self.fingerprint, stat.counts, stat.n)

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> JointEstimate:
        """The joint estimate (population target) with its covariance (module docstring).

        ``stat`` is this configuration's aggregate, or one made by its oracle
        (``j.mechanism.aggregate``; aggregates made before Joint was a mechanism).
        """
        if check_target(target) != "population":
            raise ValueError("a joint estimate is for target 'population' only; got 'respondents'")
        if isinstance(stat, SupportCounts) and stat.fingerprint == self.fingerprint:
            stat = SupportCounts(self.mechanism.fingerprint, stat.counts, stat.n)
        cells: Estimate = self.mechanism.estimate_from(stat, target="population")
        n = cells.n
        if n == 0:
            raise ValueError("no reports: a joint estimate needs n >= 1")
        gap = cells.p_star - cells.q_star
        rate = cells.observed
        if isinstance(self.mechanism, GRR):
            support = np.diag(rate) - np.outer(rate, rate)
        else:
            f = np.clip(cells.frequencies, 0.0, 1.0)
            support = -np.outer(gap * f, gap * f)
            np.fill_diagonal(support, rate * (1 - rate))
        covariance = support / (n * np.outer(gap, gap))
        return JointEstimate(self.first, self.second, cells, covariance)

    def __repr__(self) -> str:
        return (
            f"Joint({len(self.first)} x {len(self.second)} categories, {self.mechanism.name}, "
            f"epsilon={self.epsilon:.4g})"
        )

