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
from itertools import product
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable import wire
from deniable._aggregates import SupportCounts
from deniable._estimate import Estimate, check_target
from deniable._marginals import (
    Association,
    IndependenceTest,
    MarginalEstimate,
    MarginalTable,
    cell_covariance,
    check_names,
    cramers_v,
    marginal_of,
    positions,
    wald_independence,
)
from deniable._privacy import check_epsilon
from deniable._results import ConfidenceInterval, Result, ResultTable
from deniable.mechanisms import GRR, OUE, SUE, FrequencyOracle
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._domain import Domain
from deniable.mechanisms.registry import register

__all__ = ["Joint", "JointEstimate", "MarginalEstimate", "MarginalTable", "IndependenceTest", "Association",
           "JOINT_MECHANISMS"]

JOINT_MECHANISMS: dict[str, Callable[..., FrequencyOracle]] = {"grr": GRR, "oue": OUE, "sue": SUE}
"""The oracles whose cell covariance has a closed form (module docstring)."""
def _split_rows(rows: Any, d: int) -> list[list[Any]]:
    """Each question's answers from a sequence of rows of ``d`` answers; ValueError naming a row that is not one."""
    word, what = ("pairs", "a pair (first, second)") if d == 2 else ("rows", f"a tuple of {d} answers")
    if isinstance(rows, np.ndarray) and rows.ndim == 2 and rows.shape[1] == d:
        return [rows[:, i].tolist() for i in range(d)]
    if isinstance(rows, (str, bytes)):
        many = "pairs (first, second)" if d == 2 else f"tuples of {d} answers"
        raise ValueError(f"{word} must be a sequence of {many}; got {rows!r:.60}")
    items = list(rows)
    for i, row in enumerate(items):
        if not isinstance(row, (tuple, list, np.ndarray)) or len(row) != d:
            raise ValueError(f"{word}[{i}] must be {what}; got {row!r:.60}")
    return [[row[i] for row in items] for i in range(d)]


def answer_codes(questions: Sequence[Domain], columns: tuple[Any, ...]) -> list[NDArray[np.int64]]:
    """Each question's answer positions, from one column per question or one sequence of rows of answers;
    ValueError naming what is wrong."""
    d = len(questions)
    if len(columns) == 1:
        columns = tuple(_split_rows(columns[0], d))
    if len(columns) != d:
        raise ValueError(f"give {d} columns of answers, one per question (or one sequence of rows); "
                         f"got {len(columns)}")
    codes = [q.encode(c) for q, c in zip(questions, columns, strict=True)]
    if len({c.shape for c in codes}) != 1:
        sizes = " and ".join(str(c.size) for c in codes)
        raise ValueError(f"{'first and second' if d == 2 else 'the columns'} need the same length; got {sizes}")
    return codes


def one_row(answers: tuple[Any, ...], d: int) -> tuple[Any, ...]:
    """One respondent's answers given as ``(a, b, ...)`` or as one tuple ``((a, b, ...),)``."""
    if len(answers) == 1:
        return tuple(column[0] for column in _split_rows([answers[0]], d))
    return answers


@dataclass(frozen=True, eq=False)
class JointEstimate(Result):
    """The debiased joint shares of several questions, their covariance, marginals and independence tests.

    ``cells`` is the product-domain :class:`~deniable.Estimate` (population
    target); ``covariance`` the ``K x K`` covariance of its frequencies;
    ``questions`` each question's categories; ``names`` their names where the
    :class:`Joint` was given them (``marginal(("q1", "q3"))`` then works).
    Its intervals, ``to_dict`` and ``to_frame`` are the cells', labelled by the
    tuple of answers (row-major: the last question's answer varies fastest).

    Parameters
    ----------
    questions : tuple of tuple
        Each question's categories.
    cells : Estimate
        The estimate of the ``K`` cells of the product domain, row-major.
    covariance : numpy.ndarray
        The ``K x K`` covariance of the cells' frequencies (module
        docstring).
    names : tuple of str or None, default None
        The questions' names, where the :class:`Joint` was given them.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> j = dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=3.0)
    >>> first = rng.choice(["yes", "no"], size=5000, p=[0.3, 0.7])
    >>> second = rng.choice(["A", "B", "C"], size=5000)
    >>> est = j.estimate(j.privatize_many(first, second, rng=rng))
    >>> est.table.shape, est.n
    ((2, 3), 5000)
    >>> est.marginal(0).frequencies.round(2).tolist()
    [0.3, 0.7]
    >>> est.independence().df
    2
    """

    questions: tuple[tuple[Any, ...], ...]
    cells: Estimate
    covariance: NDArray[np.float64]
    names: tuple[str, ...] | None = None

    ci_methods: ClassVar[tuple[str, ...]] = Estimate.ci_methods

    @property
    def first(self) -> tuple[Any, ...]:
        """The first question's categories."""
        return self.questions[0]

    @property
    def second(self) -> tuple[Any, ...]:
        """The second question's categories."""
        return self.questions[1]

    @property
    def std_errors(self) -> NDArray[np.float64] | None:
        """The cells' standard errors (the square roots of the diagonal of :attr:`covariance`)."""
        return self.cells.std_errors

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """The cells' intervals (:meth:`deniable.Estimate.confidence_interval`), row-major."""
        return self.cells.confidence_interval(confidence_level, method)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """The cells' table, each cell labelled by its tuple of answers; the questions' categories in the
        fields (``first`` and ``second`` for two questions)."""
        cells = self.cells._table(confidence_level, method)
        named = {"first": list(self.first), "second": list(self.second)} if len(self.questions) == 2 else {}
        fields = {**cells.fields, **named, "questions": [list(q) for q in self.questions]}
        if self.names is not None:
            fields["names"] = list(self.names)
        return ResultTable(fields, cells.columns, "cell", list(product(*self.questions)), "cells")

    def _caption(self) -> str:
        return f"{self.cells._caption()}: {' x '.join(str(len(q)) for q in self.questions)} cells"

    @property
    def n(self) -> int:
        return self.cells.n

    @property
    def table(self) -> NDArray[np.float64]:
        """The estimated shares as an array of shape ``(k_1, ..., k_d)`` (rows: the first question)."""
        return self.cells.frequencies.reshape(tuple(len(q) for q in self.questions))

    def marginal(self, which: Any) -> Any:
        """One question's shares (``which`` its position or name: a :class:`MarginalEstimate`), or the joint
        shares of several (``which`` a tuple of positions or names, e.g. ``("q1", "q3")``: a
        :class:`~deniable._marginals.MarginalTable`): sums of the joint cells, with their covariance
        (:mod:`deniable._marginals`)."""
        return marginal_of(self.questions, self.cells.frequencies, self.covariance, self.n, which, self.names)

    def independence(self, first: Any = 0, second: Any = 1) -> IndependenceTest:
        """Wald test of independence of two questions (positions or names; default the first two),
        ``(k_i-1)(k_j-1)`` degrees of freedom, on their two-way marginal."""
        pair = positions((first, second), len(self.questions), self.names)
        if len(self.questions) == 2 and pair == (0, 1):
            return wald_independence(self.table, self.covariance)
        return self.marginal(pair).independence()

    def association(self, first: Any = 0, second: Any = 1) -> Association:
        """Cramér's V between two questions with its delta-method standard error (:mod:`deniable._marginals`)."""
        pair = self.marginal((first, second))
        return cramers_v(pair.table, pair.covariance)


@register(kind="joint", decode_cost="O(n) support counts of k1 k2 cells")
class Joint(Mechanism):
    r"""Several categorical questions randomized as one answer by an oracle on their product domain.

    ``Joint(q1, q2, ..., epsilon=..., mechanism="auto", names=None)``: each
    ``q`` is a question's categories (a list, or an int ``k`` for ``0..k-1``),
    two or more; ``names`` (optional) one name per question, by which the
    estimate's :meth:`~JointEstimate.marginal` also finds them;
    ``mechanism`` one of ``"auto"``, ``"grr"``, ``"oue"``, ``"sue"``. The
    answers' privacy loss is the oracle's ``epsilon`` (:attr:`epsilon`), not the
    sum over the questions. The product has ``K = k_1 ... k_d`` cells, so this
    suits a few small questions (a few hundred cells); every marginal then
    comes from the one joint estimate and agrees with the others.

    A :class:`~deniable.mechanisms._contract.Mechanism` with the wire id
    ``"joint"``: its configuration's ``domain`` is the questions' categories
    and its ``params`` the oracle's own configuration (on the cells
    ``0..K - 1``) and the names where given, so ``dn.from_config(j.to_config()) == j``::

        {"format": "deniable.mechanism", "version": 1, "mechanism": "joint",
         "domain": [["yes", "no"], ["A", "B", "C"]], "epsilon": 3.0,
         "params": {"oracle": {"mechanism": "grr", "domain": 6, ...}}}

    A true value is a tuple of answers ``(a, b, ...)``; reports, their JSON and
    the aggregate (:class:`~deniable._aggregates.SupportCounts` of the cells)
    are the oracle's, and the estimate is a :class:`JointEstimate`.

    Parameters
    ----------
    *questions : sequence or int
        Two or more questions: each its categories, or an int ``k`` for
        ``0..k-1``.
    epsilon : float
        The privacy loss of one report of all the answers together, ``> 0``.
    mechanism : {"auto", "grr", "oue", "sue"}, default "auto"
        The oracle on the cells; ``"auto"`` takes the one with the lower
        :math:`V^*` at ``K`` cells and ``epsilon``.

    Raises
    ------
    ValueError
        Fewer than two questions, a question with fewer than two
        categories, an unknown ``mechanism`` or a bad ``epsilon``.

    Notes
    -----
    The pair :math:`(a, b)` is cell :math:`a k_2 + b`. The cells' covariance
    is :math:`\operatorname{Cov}(s_u, s_v) / (n (p^* - q^*)^2)`, with
    :math:`\operatorname{Cov}(s_u, s_v) = \lambda_u (1\{u = v\} - \lambda_v)`
    for GRR and :math:`-(p^* - q^*)^2 f_u f_v` off the diagonal for unary
    encoding (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> j = dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=3.0)
    >>> first = rng.choice(["yes", "no"], size=5000, p=[0.3, 0.7])
    >>> second = rng.choice(["A", "B", "C"], size=5000)
    >>> est = j.estimate(j.privatize_many(first, second, rng=rng))
    >>> j.epsilon <= 3.0, j.shape
    (True, (2, 3))
    >>> bool(abs(est.table.sum() - 1) < 1e-9)
    True
    """

    wire_id = "joint"
    stat_type = SupportCounts

    def __init__(self, *questions: Sequence[Any] | int, epsilon: float, mechanism: str = "auto",
                 names: Sequence[str] | None = None) -> None:
        if len(questions) < 2:
            raise ValueError(f"Joint needs two or more questions' categories; got {len(questions)}")
        self._questions = tuple(Domain(q, "Joint") for q in questions)
        self.names = check_names(names, len(questions), "Joint")
        cells = int(np.prod([q.k for q in self._questions]))
        eps = check_epsilon(epsilon, owner="Joint")
        if mechanism == "auto":
            built = [cls(cells, epsilon=eps) for cls in (GRR, OUE)]
            self.mechanism: FrequencyOracle = min(built, key=lambda m: float(m.variance(1)[0]))
        elif mechanism in JOINT_MECHANISMS:
            self.mechanism = JOINT_MECHANISMS[mechanism](cells, epsilon=eps)
        else:
            raise ValueError(f"mechanism must be one of {['auto', *JOINT_MECHANISMS]}; got {mechanism!r}")

    @property
    def questions(self) -> tuple[tuple[Any, ...], ...]:
        """Each question's categories, in order."""
        return tuple(tuple(q.values) for q in self._questions)

    @property
    def shape(self) -> tuple[int, ...]:
        """Each question's number of categories."""
        return tuple(q.k for q in self._questions)

    @property
    def first(self) -> tuple[Any, ...]:
        return tuple(self._questions[0].values)

    @property
    def second(self) -> tuple[Any, ...]:
        return tuple(self._questions[1].values)

    @property
    def domain(self) -> tuple[tuple[Any, ...], ...]:
        """The true values a device takes: the tuples of answers, row-major (the last varies fastest)."""
        return tuple(product(*self.questions))

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

    def cell(self, *answers: Any) -> int:
        """The product-domain category of one respondent's answers (``a * k2 + b`` for two questions)."""
        if len(answers) != len(self._questions):
            raise ValueError(f"cell needs {len(self._questions)} answers, one per question; got {len(answers)}")
        codes = tuple(q.encode_one(a) for q, a in zip(self._questions, answers, strict=True))
        return int(np.ravel_multi_index(codes, self.shape))

    # ------------------------------------------------------------ privatize
    def _cells(self, columns: tuple[Any, ...]) -> Any:
        """The cells of the answers: one column per question, or one sequence of rows of answers."""
        return np.ravel_multi_index(tuple(answer_codes(self._questions, columns)), self.shape)

    def privatize_many(self, *answers: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize many respondents' answers: one column per question (``first, second, ...``), or one
        sequence of rows ``(a, b, ...)``; secure randomness unless ``rng`` is given."""
        return self.mechanism.privatize_many(self._cells(answers), rng=rng)

    def privatize(self, *answers: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one respondent's answers (``a, b, ...``, or one tuple ``(a, b, ...)``)."""
        answers = one_row(answers, len(self._questions))
        return self.mechanism.privatize(self.cell(*answers), rng=rng)

    # ----------------------------------------------------------------- wire
    def _domain_json(self) -> Any:
        return [q.to_json() for q in self._questions]

    def _domain_key(self) -> Any:
        return self._questions

    def _params(self) -> dict[str, Any]:
        named = {} if self.names is None else {"names": list(self.names)}
        return {"oracle": self.mechanism.to_config(), **named}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> Joint:
        if not (isinstance(domain, list) and len(domain) >= 2
                and all(isinstance(d, (list, int)) and not isinstance(d, bool) for d in domain)):
            raise ValueError(
                f"config field 'domain' must be the two questions' categories (or more, one list each) for joint; "
                f"got {domain!r:.60}"
            )
        self = cls.__new__(cls)
        self._questions = tuple(Domain(d, "Joint") for d in domain)
        self.names = check_names(params.get("names"), len(domain), "Joint (config field 'params.names')")
        oracle = wire.from_config(params["oracle"])
        cells = int(np.prod([q.k for q in self._questions]))
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
        return JointEstimate(self.questions, cells, cell_covariance(self.mechanism, cells), self.names)

    def __repr__(self) -> str:
        return (
            f"Joint({' x '.join(str(k) for k in self.shape)} categories, {self.mechanism.name}, "
            f"epsilon={self.epsilon:.4g})"
        )

