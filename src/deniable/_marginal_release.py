"""Marginal release for many questions (CALM, Zhang et al. CCS 2018): each device reports one sampled view.

``d`` categorical questions are too many to randomize jointly when their
product has more cells than reports (:class:`deniable.Joint`'s variance grows
with the number of cells). A release fixes ``m`` *views*, sets of ``l``
questions (by default all ``C(d, l)`` of them); each device draws one view
uniformly at random (the groups of CALM, drawn on the device so that the
server never assigns them) and reports the cell of its answers to that view's
questions through a frequency oracle on the view's product domain (GRR or a
unary encoding, whose cell covariance has a closed form; ``"auto"``: OUE or
GRR, whichever has the lower ``Var*`` on the largest view, as CALM weighs
OLH/OUE against GRR). The view is drawn independently of the answers, so a
report ``(j, y)`` has probability ``P_j(y | x) / m`` and the release costs
each respondent the largest of the views' oracles' epsilons (the same
epsilon for every view, up to the integer rounding of the sampler).

The analyst estimates each view's marginal from its group, makes the views
consistent and answers any marginal inside a view with standard errors
(:mod:`deniable._release_estimate`).

Reports are structured: ``view`` (the view's index) and the oracle's report
of the view's cell (``cell`` for GRR; ``bits`` for unary encoding, packed to
the widest view's bytes, the spare bits zero). On the wire a report is
``{"view": j, "report": <the view's oracle's report>}``. The aggregate is one
:class:`~deniable._aggregates.SupportCounts`: view by view, the oracle's
support counts of its cells followed by the view's number of reports.

>>> import numpy as np
>>> r = MarginalRelease([0, 1], [0, 1], [0, 1], epsilon=2.0, names=["a", "b", "c"])
>>> r.views
((0, 1), (0, 2), (1, 2))
>>> rng = np.random.default_rng(0)
>>> answers = rng.integers(0, 2, size=(30_000, 3))
>>> est = r.estimate(r.privatize_many(answers, rng=rng))
>>> est.marginal(("a", "c")).table.shape
(2, 2)
>>> bool(abs(est.marginal("a").frequencies.sum() - 1) < 1e-12)
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations, product
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable import wire
from deniable._aggregates import SupportCounts
from deniable._estimate import check_target
from deniable._joint import JOINT_MECHANISMS, answer_codes, one_row
from deniable._marginals import cell_covariance, check_names, positions
from deniable._privacy import check_epsilon
from deniable._release_estimate import ReleaseEstimate, consistency_steps, make_consistent
from deniable.mechanisms import GRR, OUE, FrequencyOracle
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._domain import Domain
from deniable.mechanisms.registry import register

__all__ = ["MarginalRelease", "MAX_RELEASE_CELLS"]

MAX_RELEASE_CELLS = 4096
"""The most cells the views may have together (the consistency map is a square matrix of them)."""


def _views(views: Any, size: Any, d: int, names: tuple[str, ...] | None) -> tuple[tuple[int, ...], ...]:
    """The views as sorted tuples of question positions; ValueError naming ``views`` or ``size``."""
    if views is None:
        width = 2 if size is None else size
        if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or not 1 <= width <= d:
            raise ValueError(f"size must be an integer 1..{d} (the questions in each view); got {size!r:.40}")
        return tuple(combinations(range(d), int(width)))
    if size is not None:
        raise ValueError("give views or size, not both: size makes every view of that many questions")
    if isinstance(views, (str, bytes)) or not isinstance(views, Sequence) or not views:
        raise ValueError(
            f"views must be a non-empty list of tuples of questions (positions or names); got {views!r:.60}"
        )
    out = []
    for view in views:
        if isinstance(view, (str, bytes, int)):
            raise ValueError(f"views: each view must be a tuple of questions; got {view!r:.40}")
        try:
            out.append(tuple(sorted(positions(tuple(view), d, names))))
        except ValueError as exc:
            raise ValueError(f"views: {exc}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"views must differ; got {list(views)!r:.80}")
    return tuple(out)


@register(kind="joint", decode_cost="O(n) support counts of every view's cells")
class MarginalRelease(Mechanism):
    r"""Marginals of many categorical questions: each device randomizes its answers to one drawn view.

    CALM's marginal release (Zhang et al., CCS 2018): the views are sets of
    questions, each device draws one uniformly and reports the cell of its
    answers to them through a frequency oracle; the analyst estimates every
    view, makes overlapping views agree (CALM's consistency step) and reads
    any marginal inside a view off the consistent views, with standard
    errors (:mod:`deniable._marginal_release`, :mod:`deniable._release_estimate`).

    Parameters
    ----------
    *questions : sequence or int
        Each question's categories (a list, or ``k`` for ``0..k-1``), two or more.
    epsilon : float
        Each respondent's privacy loss (one report of one view), ``> 0``.
    size : int, optional
        The questions in each view (default 2): the views are then all
        ``C(d, size)`` sets of ``size`` questions. Not with ``views``.
    views : sequence of tuples, optional
        The views themselves, each a tuple of question positions or names.
    mechanism : str
        The views' oracle: ``"auto"`` (OUE or GRR, the lower ``Var*`` on the
        largest view), ``"grr"``, ``"oue"`` or ``"sue"``.
    names : sequence of str, optional
        One name per question; marginals and views may then name questions.

    Raises
    ------
    ValueError
        Fewer than two questions, a bad ``size``, ``views``, ``names`` or
        ``mechanism``, or views with more than :data:`MAX_RELEASE_CELLS` cells in all.

    Notes
    -----
    With ``m`` views, report ``(j, y)`` has probability :math:`P_j(y \mid x_{V_j}) / m`,
    so the ratio of two answers' report probabilities is view ``j``'s oracle's,
    at most :math:`e^\varepsilon`. View ``j``'s group of :math:`n_j` reports
    estimates its marginal with the oracle's variance, about
    :math:`\mathrm{Var}^*/n_j` per cell with :math:`n_j \approx n/m`: a view
    of few cells is estimated far better than the full joint of ``d``
    questions would be from all ``n`` reports when the product is large.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> r = dn.MarginalRelease(2, 3, 2, 2, epsilon=3.0, names=["os", "plan", "crash", "beta"])
    >>> len(r.views), round(r.epsilon, 6)
    (6, 3.0)
    >>> rng = np.random.default_rng(1)
    >>> answers = np.column_stack([rng.integers(0, k, 40_000) for k in (2, 3, 2, 2)])
    >>> est = r.estimate(r.privatize_many(answers, rng=rng))
    >>> pair = est.marginal(("os", "crash"))
    >>> pair.table.shape, bool(np.all(pair.std_errors < 0.02))
    ((2, 2), True)
    """

    wire_id = "marginal-release"
    report_kind = "view-report"
    stat_type = SupportCounts

    def __init__(
        self,
        *questions: Sequence[Any] | int,
        epsilon: float,
        size: int | None = None,
        views: Sequence[Sequence[Any]] | None = None,
        mechanism: str = "auto",
        names: Sequence[str] | None = None,
    ) -> None:
        if len(questions) < 2:
            raise ValueError(f"MarginalRelease needs two or more questions' categories; got {len(questions)}")
        eps = check_epsilon(epsilon, owner="MarginalRelease")
        self._questions = tuple(Domain(q, "MarginalRelease") for q in questions)
        self.names = check_names(names, len(questions), "MarginalRelease")
        self.views = _views(views, size, len(questions), self.names)
        sizes = self._view_sizes()
        cls: Callable[..., FrequencyOracle]
        if mechanism == "auto":
            cls = min((GRR, OUE), key=lambda c: float(c(max(sizes), epsilon=eps).variance(1)[0]))
        elif mechanism in JOINT_MECHANISMS:
            cls = JOINT_MECHANISMS[mechanism]
        else:
            raise ValueError(f"mechanism must be one of {['auto', *JOINT_MECHANISMS]}; got {mechanism!r:.40}")
        self._setup([cls(k, epsilon=eps) for k in sizes])

    def _view_sizes(self) -> list[int]:
        """Each view's number of cells; ValueError past :data:`MAX_RELEASE_CELLS` in all."""
        sizes = [int(np.prod([self._questions[q].k for q in v])) for v in self.views]
        if sum(sizes) > MAX_RELEASE_CELLS:
            raise ValueError(
                f"views: {len(sizes)} views of {sum(sizes)} cells in all; at most {MAX_RELEASE_CELLS} "
                "(choose fewer or smaller views)"
            )
        return sizes

    def _setup(self, oracles: list[FrequencyOracle]) -> None:
        self.oracles = tuple(oracles)
        self._unary = oracles[0].report_kind != "category"
        width = max(o.report_bytes for o in oracles) if self._unary else 0  # type: ignore[attr-defined]
        field = ("bits", "u1", (width,)) if self._unary else ("cell", "<i8")
        self.report_dtype = np.dtype([("view", "<u2"), field])

    # ------------------------------------------------------------- identity
    @property
    def questions(self) -> tuple[tuple[Any, ...], ...]:
        """Each question's categories, in order."""
        return tuple(tuple(q.values) for q in self._questions)

    @property
    def shape(self) -> tuple[int, ...]:
        """Each question's number of categories."""
        return tuple(q.k for q in self._questions)

    @property
    def domain(self) -> tuple[tuple[Any, ...], ...]:
        """The true values a device takes: the tuples of answers, row-major (the last varies fastest)."""
        return tuple(product(*self.questions))

    @property
    def epsilon(self) -> float:
        """The largest of the views' oracles' epsilons: a report's privacy loss (module docstring)."""
        return max(float(o.epsilon) for o in self.oracles)

    @property
    def report_bits(self) -> int:
        return (len(self.views) - 1).bit_length() + max(int(o.report_bits) for o in self.oracles)

    # ------------------------------------------------------------ privatize
    def privatize_many(self, *answers: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many respondents' answers (one column per question, or one sequence of rows): each
        draws a view uniformly and reports its cell there; secure randomness unless ``rng`` is given."""
        codes = answer_codes(self._questions, answers)
        source = randomness.resolve(rng)
        n = codes[0].size
        drawn = randomness.uniform_below(len(self.views), n, source).astype(np.int64)
        out = np.zeros(n, dtype=self.report_dtype)
        out["view"] = drawn
        for j, (view, oracle) in enumerate(zip(self.views, self.oracles, strict=True)):
            rows = np.flatnonzero(drawn == j)
            if not rows.size:
                continue
            cells = np.ravel_multi_index(tuple(codes[q][rows] for q in view), tuple(self.shape[q] for q in view))
            reports = oracle._sample(cells.astype(np.int64), source)
            if self._unary:
                out["bits"][rows, : reports.shape[1]] = reports
            else:
                out["cell"][rows] = reports
        return out

    def privatize(self, *answers: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one respondent's answers (``a, b, ...``, or one tuple ``(a, b, ...)``): one report."""
        row = one_row(answers, len(self._questions))
        return self.privatize_many(*([a] for a in row), rng=rng)[0]

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """``(outputs, P)``: ``P[x, o] = P(report = outputs[o] | answers = domain[x])``, ``outputs`` the
        pairs ``(view, oracle output)``; the answers row-major. For checking privacy exactly (small views)."""
        outputs: list[Any] = []
        blocks = []
        cells = np.array(list(product(*(range(k) for k in self.shape))), dtype=np.int64).reshape(-1, len(self.shape))
        for j, (view, oracle) in enumerate(zip(self.views, self.oracles, strict=True)):
            out_j, matrix = oracle.transition_matrix()
            outputs += [(j, y) for y in out_j]
            at = np.ravel_multi_index(tuple(cells[:, q] for q in view), tuple(self.shape[q] for q in view))
            blocks.append(matrix[at] / len(self.views))
        return outputs, np.hstack(blocks)

    # ----------------------------------------------------------------- wire
    def _domain_json(self) -> Any:
        return [q.to_json() for q in self._questions]

    def _domain_key(self) -> Any:
        return self._questions

    def _params(self) -> dict[str, Any]:
        named = {} if self.names is None else {"names": list(self.names)}
        return {"views": [list(v) for v in self.views], "oracles": [o.to_config() for o in self.oracles], **named}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> MarginalRelease:
        if not (
            isinstance(domain, list)
            and len(domain) >= 2
            and all(isinstance(d, (list, int)) and not isinstance(d, bool) for d in domain)
        ):
            raise ValueError(
                f"config field 'domain' must be two or more questions' categories (one list each) for "
                f"marginal-release; got {domain!r:.60}"
            )
        self = cls.__new__(cls)
        self._questions = tuple(Domain(d, "MarginalRelease") for d in domain)
        self.names = check_names(params.get("names"), len(domain), "MarginalRelease (config field 'params.names')")
        self.views = _views(params.get("views"), None, len(domain), None)
        sizes = self._view_sizes()
        configs = params.get("oracles")
        if not isinstance(configs, list) or len(configs) != len(sizes):
            raise ValueError(
                f"config field 'params.oracles' must be one oracle per view ({len(sizes)}); got {configs!r:.60}"
            )
        oracles = [wire.from_config(c) for c in configs]
        kinds = {type(o) for o in oracles}
        for k, o in zip(sizes, oracles, strict=True):
            if type(o) not in JOINT_MECHANISMS.values() or not (o.domain_obj.is_range and o.k == k) or len(kinds) > 1:
                raise ValueError(
                    f"config field 'params.oracles' must configure one of {list(JOINT_MECHANISMS)} "
                    f"(the same for every view) on each view's cells; got {o!r:.60}"
                )
        self._setup(oracles)
        return self

    # -------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = np.asarray(reports)
        if arr.size == 0:
            return np.zeros(0, dtype=self.report_dtype)
        if arr.ndim != 1 or arr.dtype.names != self.report_dtype.names:
            raise ValueError(
                f"MarginalRelease reports must be a 1-D structured array with fields "
                f"{list(self.report_dtype.names or ())}; got shape {arr.shape} and dtype {arr.dtype}"
            )
        views = arr["view"]
        bad = np.flatnonzero((views < 0) | (views >= len(self.views)))
        if bad.size:
            raise ValueError(
                f"MarginalRelease report {bad[0]} names view {views[bad[0]]}; the views are 0..{len(self.views) - 1}"
            )
        payload = arr["bits"] if self._unary else arr["cell"]
        for j, oracle in enumerate(self.oracles):
            rows = views == j
            if self._unary:
                used, spare = oracle.report_bytes, oracle.report_bytes * 8 - oracle.k  # type: ignore[attr-defined]
                wrong = np.any(payload[:, used:] != 0, axis=1) | (payload[:, used - 1] & ((1 << spare) - 1) != 0)
            else:
                wrong = (payload < 0) | (payload >= oracle.k)
            bad = np.flatnonzero(rows & wrong)
            if bad.size:
                raise ValueError(
                    f"MarginalRelease report {bad[0]} is not a report of view {j} ({oracle.k} cells, {oracle.name})"
                )
        return np.ascontiguousarray(arr.astype(self.report_dtype))

    def _group(self, checked: NDArray[Any], j: int) -> NDArray[Any]:
        """View ``j``'s reports in its oracle's checked form."""
        rows = checked["view"] == j
        if self._unary:
            width: int = self.oracles[j].report_bytes  # type: ignore[attr-defined]
            return np.ascontiguousarray(np.asarray(checked["bits"])[rows, :width])
        return np.asarray(checked["cell"][rows], dtype=np.int64)

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        out = np.zeros(len(items), dtype=self.report_dtype)
        for i, item in enumerate(items):
            if not isinstance(item, dict) or set(item) != {"view", "report"}:
                raise ValueError(f"MarginalRelease report {i} must be an object {{view, report}}; got {item!r:.60}")
            view = item["view"]
            if isinstance(view, bool) or not isinstance(view, int) or not 0 <= view < len(self.views):
                raise ValueError(
                    f"MarginalRelease report {i}: view must be an integer 0..{len(self.views) - 1}; got {view!r:.40}"
                )
            out["view"][i] = view
        for j, oracle in enumerate(self.oracles):
            rows = np.flatnonzero(out["view"] == j)
            if rows.size:
                checked = oracle._reports_from_json([items[r]["report"] for r in rows])
                if self._unary:
                    out["bits"][rows, : checked.shape[1]] = checked
                else:
                    out["cell"][rows] = checked
        return out

    def _report_to_json(self, report: Any) -> Any:
        j = int(report["view"])
        oracle = self.oracles[j]
        inner = report["bits"][: oracle.report_bytes] if self._unary else int(report["cell"])  # type: ignore[attr-defined]
        return {"view": j, "report": oracle._report_to_json(inner)}

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> SupportCounts:
        """View by view, the oracle's support counts and the view's number of reports, in one vector."""
        parts = []
        for j, oracle in enumerate(self.oracles):
            stat = oracle._aggregate_checked(self._group(checked, j))
            parts += [stat.counts, np.array([stat.n], dtype=np.int64)]
        return SupportCounts(self.fingerprint, np.concatenate(parts), int(len(checked)))

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> ReleaseEstimate:
        """The consistent views (population target) with the covariance of every marginal
        (:mod:`deniable._release_estimate`). A view without reports starts uniform with weight 0: the
        consistency step fills in what other views share with it, and its standard errors are NaN."""
        if check_target(target) != "population":
            raise ValueError("a marginal release estimate is for target 'population' only; got 'respondents'")
        stat.require(SupportCounts, self.fingerprint)
        sizes = [o.k for o in self.oracles]
        if np.shape(stat.counts) != (sum(sizes) + len(sizes),):
            raise ValueError(
                f"aggregate has {np.size(stat.counts)} counts; this release needs "
                f"{sum(sizes) + len(sizes)} (each view's cells and its number of reports)"
            )
        values, blocks, variances, counts = [], [], [], []
        start = 0
        for oracle in self.oracles:
            n_j = int(stat.counts[start + oracle.k])
            if n_j:
                cells = oracle.estimate_from(
                    SupportCounts(oracle.fingerprint, stat.counts[start : start + oracle.k], n_j)
                )
                values.append(cells.frequencies)
                blocks.append(cell_covariance(oracle, cells))
                variances.append(float(oracle.variance(n_j)[0]))
            else:  # no reports: uniform, weight 0 (the other views' agreement fills in), unknown covariance
                values.append(np.full(oracle.k, 1.0 / oracle.k))
                blocks.append(np.full((oracle.k, oracle.k), np.nan))
                variances.append(np.inf)
            counts.append(n_j)
            start += oracle.k + 1
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        steps = consistency_steps(self.shape, self.views, variances)
        total = np.zeros(offsets[-1] + 1)
        total[0] = 1.0
        both = make_consistent(np.column_stack([np.concatenate(values), np.eye(offsets[-1])]), offsets, steps, total)
        return ReleaseEstimate(
            self.questions,
            self.names,
            self.views,
            tuple(counts),
            both[:, 0],
            both[:, 1:],
            tuple(blocks),
            tuple(variances),
            self.oracles[0].name,
            self.epsilon,
        )

    def __repr__(self) -> str:
        return (
            f"MarginalRelease({' x '.join(str(k) for k in self.shape)} categories, {len(self.views)} views, "
            f"{self.oracles[0].name}, epsilon={self.epsilon:.4g})"
        )
