"""Set-valued answers ("which of these apps did you use?") by padding and sampling (Wang et al., S&P 2018).

Each respondent holds a set ``V`` of at most ``max_items`` of the ``k`` items. **Padding and sampling**
to length ``ell``: a set shorter than ``ell`` is padded with the dummy items ``k, k+1, ...`` (positions
``k .. k + ell - 1``) to ``ell`` entries, and one entry of the padded set is drawn uniformly (of the set
itself when it is longer than ``ell``); a frequency oracle over the ``k + ell`` items and dummies randomizes
it. ``epsilon`` is the privacy loss of the whole report, spent in full: the oracle runs at the largest
budget ``epsilon_o`` whose report is ``epsilon``-LDP (:func:`~deniable.mechanisms._set_privacy.set_oracle`),
GRR at ``ln(ell (e^epsilon - 1) + 1)`` (the amplification of sampling, as Wang et al. run it), OUE at
``epsilon`` (no amplification). :attr:`SetValued.epsilon` states the exact loss (the amplified epsilon of
:mod:`deniable.mechanisms._set_privacy`), :attr:`SetValued.oracle_epsilon` the oracle's own.

**Estimate.** When every set has at most ``ell`` items, item ``x`` is drawn with probability
``pi_x = f_x / ell`` (``f_x``: the share of respondents whose set holds ``x``), so
``f^_x = ell pi^_x`` is unbiased, with the oracle's population variance (at ``epsilon_o``) times ``ell^2``:
``Var(f^_x) = ell^2 lambda_x (1 - lambda_x) / (n (p* - q*)^2)``, ``lambda_x = q* + (p* - q*) f_x / ell``
(plugged in at the observed support rate). Sets longer than ``ell`` (allowed up to ``max_items``) make
``f^_x`` an underestimate: the planner (:func:`best_set_length`) weighs that bias against the variance,
which grows as ``ell^2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _intervals as intervals
from deniable import _randomness as randomness
from deniable import wire
from deniable._aggregates import SupportCounts
from deniable._estimate import check_target
from deniable._privacy import check_epsilon
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.errors import CategoryError
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._hashing import OLH
from deniable.mechanisms._kary import GRR
from deniable.mechanisms._set_privacy import amplified_epsilon, set_oracle
from deniable.mechanisms._unary import OUE
from deniable.mechanisms.registry import register

__all__ = ["SetValued", "ItemEstimate", "best_set_length", "SET_ORACLES"]

SET_ORACLES: dict[str, Any] = {"grr": GRR, "oue": OUE, "olh": OLH}
"""The oracles a set-valued question may use over its items and dummies (``"auto"``: the lowest ``Var*``, each
at its own budget)."""


@dataclass(frozen=True, eq=False)
class ItemEstimate(Result):
    """Each item's estimated share of respondents holding it, with standard errors (population target).

    The shares need not add up to 1 (a respondent holds several items). :meth:`frequent` lists the items
    by estimated share. :meth:`SetValued.estimate` makes it.

    Parameters
    ----------
    mechanism : str
        The mechanism's name.
    epsilon : float
        Its privacy loss per report.
    domain : tuple
        The items.
    frequencies : numpy.ndarray
        Each item's estimated share of respondents holding it.
    std_errors : numpy.ndarray
        Their standard errors (population target).
    n : int
        The number of reports.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.SetValued(["mail", "maps", "chat", "news"], epsilon=2.0, max_items=2)
    >>> sets = [{"mail", "maps"} if i % 2 else {"mail"} for i in range(4000)]
    >>> est = m.estimate(m.privatize_many(sets, rng=rng))
    >>> type(est).__name__, est.domain
    ('ItemEstimate', ('mail', 'maps', 'chat', 'news'))
    >>> bool(np.all(np.abs(est.frequencies - [1.0, 0.5, 0.0, 0.0]) < 5 * est.std_errors))
    True
    """

    mechanism: str
    epsilon: float
    domain: tuple[Any, ...]
    frequencies: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    n: int
    ell: int

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-item normal interval ``f +- z SE`` at ``confidence_level``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def frequent(self, top: int | None = None, *, threshold: float | None = None) -> list[tuple[Any, float, float]]:
        """``(item, share, std_error)`` by decreasing share: the ``top`` first, or those whose 95% interval
        lies above ``threshold``."""
        order = np.argsort(-self.frequencies, kind="stable")
        rows = [(self.domain[i], float(self.frequencies[i]), float(self.std_errors[i])) for i in order]
        if threshold is not None:
            z = intervals.z_for(0.05)
            rows = [r for r in rows if r[1] - z * r[2] > threshold]
        return rows if top is None else rows[: int(top)]

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.frequencies, "std_error": self.std_errors, "ci_low": low, "ci_high": high}
        fields = {"mechanism": self.mechanism, "epsilon": self.epsilon, "n": self.n, "ell": self.ell,
                  "target": "population"}
        return ResultTable(fields, columns, "item", self.domain, "items")

    def _caption(self) -> str:
        return f"{self.mechanism}: {len(self.domain)} items, ell={self.ell}, n={self.n}"


@register(kind="set", decode_cost="O(n) support counts of k + ell items", browser=True,
          required={"epsilon", "max_items"},
          optional={"ell"})
class SetValued(Mechanism):
    r"""Choose-several answers by padding and sampling to ``ell`` items, then a frequency oracle (module docstring).

    ``SetValued(items, epsilon=..., max_items=3, ell=None, oracle="auto")``: ``ell`` defaults to
    ``max_items`` (unbiased); ``oracle`` is ``"auto"``, ``"grr"``, ``"oue"`` or ``"olh"``. A true value is a
    set (any iterable) of distinct items; reports, their JSON and the aggregate are the oracle's.

    Parameters
    ----------
    items : int or sequence
        ``k`` (the ints ``0 .. k-1``) or the list of items (at least 2).
    epsilon : float
        The privacy loss of one whole report, ``> 0`` (keyword only, as
        all); the oracle runs at the largest budget that keeps it.
    max_items : int
        The most items a set may hold, ``1 .. k``.
    ell : int, optional
        The padded length, ``1 .. max_items``; ``max_items`` (unbiased) if
        None. :func:`best_set_length` weighs a shorter one's bias against
        its lower variance.
    oracle : {"auto", "grr", "oue", "olh"}, default "auto"
        The frequency oracle over the ``k + ell`` items and dummies;
        ``"auto"`` takes the one with the lowest :math:`V^*` at its own
        budget.

    Raises
    ------
    ValueError
        Fewer than two items, ``max_items`` or ``ell`` out of range, an
        unknown ``oracle`` or a bad ``epsilon``.

    Notes
    -----
    When every set has at most :math:`\ell` items, item :math:`x` is drawn
    with probability :math:`\pi_x = f_x / \ell`, so :math:`\hat f_x = \ell \hat\pi_x`
    is unbiased, with
    :math:`\operatorname{Var}(\hat f_x) = \ell^2 \lambda_x (1 - \lambda_x) / (n (p^* - q^*)^2)`,
    :math:`\lambda_x = q^* + (p^* - q^*) f_x / \ell` (the oracle's rates at its
    budget :math:`\epsilon_o`). GRR runs at
    :math:`\epsilon_o = \ln(\ell (e^\epsilon - 1) + 1)`, rounded down, so that
    the report's exact loss :math:`\ln(1 + (e^{\epsilon_o} - 1) / \ell)` is
    :math:`\epsilon` and never above it; OUE runs at :math:`\epsilon`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.SetValued(["mail", "maps", "chat", "news"], epsilon=2.0, max_items=2)
    >>> sets = [{"mail", "maps"} if i % 2 else {"mail"} for i in range(4000)]
    >>> est = m.estimate(m.privatize_many(sets, rng=rng))
    >>> m
    SetValued(4 items, max_items=2, ell=2, GRR, epsilon=2)
    >>> round(m.oracle_epsilon, 4)  # ln(2 (e^2 - 1) + 1)
    2.6231
    >>> [item for item, share, se in est.frequent(2)]
    ['mail', 'maps']
    """

    wire_id = "set-valued"
    stat_type = SupportCounts

    def __init__(
        self, items: Any, *, epsilon: float, max_items: int, ell: int | None = None, oracle: str = "auto"
    ) -> None:
        self._items = Domain(items, "SetValued")
        self.max_items = _positive(max_items, "max_items", self._items.k)
        self.ell = self.max_items if ell is None else _positive(ell, "ell", self.max_items)
        eps = check_epsilon(epsilon, owner="SetValued")
        k = self._items.k
        if oracle == "auto":
            built = [set_oracle(cls, k, self.ell, eps) for cls in SET_ORACLES.values()]
            self.mechanism: FrequencyOracle = min(built, key=lambda m: float(m.variance(1)[0]))
        elif oracle in SET_ORACLES:
            self.mechanism = set_oracle(SET_ORACLES[oracle], k, self.ell, eps)
        else:
            raise ValueError(f"oracle must be one of {['auto', *SET_ORACLES]} for SetValued; got {oracle!r}")

    @property
    def domain(self) -> tuple[Any, ...]:
        """The items, in order; estimates are aligned with it."""
        return tuple(self._items.values)

    @property
    def epsilon(self) -> float:
        """The exact privacy loss of a whole report (:attr:`amplified_epsilon`), ``<=`` the ``epsilon`` asked for."""
        return self.amplified_epsilon

    @property
    def oracle_epsilon(self) -> float:
        """The oracle's own privacy loss ``epsilon_o`` (a bound on a report's; ``>=`` :attr:`epsilon`)."""
        return float(self.mechanism.epsilon)

    def _claimable_epsilons(self) -> tuple[float, ...]:
        """A configuration stored before :attr:`epsilon` was the amplified loss claims the oracle's."""
        return (self.epsilon, self.oracle_epsilon)

    @cached_property
    def amplified_epsilon(self) -> float:
        r"""The exact privacy loss of the whole report (padding, sampling, then the oracle), ``<= epsilon``.

        The largest log-ratio of two sets' report probabilities over every pair of sets of at most
        ``max_items`` items (the empty set included), rounded up; :attr:`epsilon` states it. GRR:
        ``ln(1 + (e^epsilon_o - 1) / ell)``, the amplification of sampling one of ``ell`` entries (Wang et
        al.); OUE: ``epsilon_o`` (a set of ``ell`` items and the empty set have disjoint padded sets, which its
        bit vectors tell apart); OLH: the largest ratio over its whole hash family, searched exactly
        (:mod:`deniable.mechanisms._set_privacy`).

        Examples
        --------
        >>> import numpy as np
        >>> import deniable as dn
        >>> m = dn.SetValued(10, epsilon=2.0, max_items=4, oracle="grr")
        >>> a = m.amplified_epsilon
        >>> a <= 2.0, round(a, 6), round(float(np.log1p(np.expm1(m.oracle_epsilon) / 4)), 6)
        (True, 2.0, 2.0)
        >>> u = dn.SetValued(10, epsilon=2.0, max_items=4, oracle="oue")
        >>> u.amplified_epsilon == u.oracle_epsilon
        True
        """
        return amplified_epsilon(self.mechanism, self._items.k, self.ell)

    @property
    def report_bits(self) -> int:
        return int(self.mechanism.report_bits)

    @property
    def report_kind(self) -> str:  # type: ignore[override]
        """The oracle's reports (a position for GRR, packed bits for OUE, a seed and a bucket for OLH)."""
        return self.mechanism.report_kind

    @property
    def wide_fields(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.mechanism.wide_fields

    # ------------------------------------------------------------ privatize
    def _padded(self, sets: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Each set's item positions (rows padded with -1) and its length; errors name ``sets[i]``."""
        rows = list(sets) if not isinstance(sets, (str, bytes)) else [sets]
        out = np.full((len(rows), self.max_items), -1, dtype=np.int64)
        lengths = np.zeros(len(rows), dtype=np.int64)
        for i, value in enumerate(rows):
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise ValueError(f"sets[{i}] must be a set of items (a list, tuple or set); got {value!r:.60}")
            members = list(value)
            if len(members) > self.max_items:
                raise ValueError(f"sets[{i}] has {len(members)} items; at most max_items={self.max_items} are allowed")
            try:
                positions = [self._items.encode_one(v) for v in members]
            except CategoryError as exc:
                raise CategoryError(f"sets[{i}]: {exc}", exc.value, i) from None
            if len(set(positions)) != len(positions):
                raise ValueError(f"sets[{i}] holds an item twice; a set's items must be distinct")
            out[i, : len(positions)] = positions
            lengths[i] = len(positions)
        return out, lengths

    def sample(self, sets: Any, rng: randomness.RNGLike = None) -> NDArray[np.int64]:
        """Padding and sampling: the item or dummy position (``0 .. k + ell - 1``) each set contributes."""
        padded, lengths = self._padded(sets)
        return self._sample_padded(padded, lengths, randomness.resolve(rng))

    def _sample_padded(self, padded: NDArray[np.int64], lengths: NDArray[np.int64],
                       source: randomness.Source) -> NDArray[np.int64]:
        """:meth:`sample` of checked sets: item positions (rows padded with -1, at least ``max_items`` wide)."""
        bound = np.maximum(lengths, self.ell)
        draw = np.zeros(lengths.size, dtype=np.int64)
        for b in np.unique(bound):  # at most max_items distinct bounds
            rows = np.flatnonzero(bound == b)
            draw[rows] = randomness.uniform_below(int(b), rows.size, source).astype(np.int64)
        picked = padded[np.arange(lengths.size), np.minimum(draw, self.max_items - 1)]
        return np.where(draw < lengths, picked, self._items.k + draw - lengths)

    def privatize_many(self, sets: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many sets (secure randomness unless ``rng`` is given); one oracle report each."""
        source = randomness.resolve(rng)
        return self.mechanism._sample(self.sample(sets, source), source)

    def privatize(self, value: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one respondent's set."""
        return self.privatize_many([value], rng=rng)[0]

    # ----------------------------------------------------------------- wire
    def _domain_json(self) -> Any:
        return self._items.to_json()

    def _domain_key(self) -> Any:
        return self._items

    def _params(self) -> dict[str, Any]:
        return {"max_items": self.max_items, "ell": self.ell, "oracle": self.mechanism.to_config()}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> SetValued:
        self = cls.__new__(cls)
        self._items = Domain(domain, "SetValued")
        self.max_items = _positive(params.get("max_items"), "max_items", self._items.k)
        self.ell = _positive(params.get("ell"), "ell", self.max_items)
        oracle = wire.from_config(params["oracle"])
        cells = self._items.k + self.ell
        if type(oracle) not in SET_ORACLES.values() or not (oracle.domain_obj.is_range and oracle.k == cells):
            raise ValueError(
                f"config field 'params.oracle' must configure one of {list(SET_ORACLES)} on the {cells} items "
                f"and dummies 0..{cells - 1}; got {oracle!r:.60}"
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
        stat: SupportCounts = self.mechanism._aggregate_checked(checked)
        return SupportCounts(self.fingerprint, stat.counts, stat.n)

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> ItemEstimate:
        """Each item's share ``ell pi^_x`` with its standard error (module docstring)."""
        if check_target(target) != "population":
            raise ValueError("a set-valued estimate is for target 'population' only; got 'respondents'")
        stat.require(SupportCounts, self.fingerprint)
        if stat.n == 0:
            raise ValueError("no reports: a SetValued estimate needs n >= 1")
        cells = self.mechanism.estimate_from(SupportCounts(self.mechanism.fingerprint, stat.counts, stat.n))
        k = self._items.k
        return ItemEstimate(self.name, self.epsilon, self.domain, self.ell * cells.frequencies[:k],
                            self.ell * np.asarray(cells.std_errors)[:k], stat.n, self.ell)

    def variance(self, n: int, frequencies: Any = None) -> NDArray[np.float64]:
        """Each item's variance for ``n`` respondents at the items' shares (None: 0), sets of at most ``ell``."""
        f = np.zeros(self._items.k) if frequencies is None else np.asarray(frequencies, dtype=float)
        if f.shape != (self._items.k,):
            raise ValueError(f"frequencies must have one share per item ({self._items.k}); got shape {f.shape}")
        p, q = (float(r[0]) for r in self.mechanism.support_rates())
        rate = q + (p - q) * f / self.ell
        return np.asarray(self.ell**2 * rate * (1 - rate) / (n * (p - q) ** 2))

    def transition_matrix(self, sets: Sequence[Any]) -> NDArray[np.float64]:
        """``P[s, y]``: the probability of each oracle output ``y`` for each of ``sets`` (exact; small only)."""
        _, rows = self.mechanism.transition_matrix()
        padded, lengths = self._padded(sets)
        out = np.zeros((len(lengths), rows.shape[1]))
        k = self._items.k
        for i, (members, size) in enumerate(zip(padded, lengths, strict=True)):
            bound = max(int(size), self.ell)
            entries = [*members[:size].tolist(), *range(k, k + bound - int(size))]
            out[i] = rows[entries].sum(axis=0) / bound
        return out

    def __repr__(self) -> str:
        return (f"SetValued({len(self.domain)} items, max_items={self.max_items}, ell={self.ell}, "
                f"{self.mechanism.name}, epsilon={self.epsilon:.4g})")


def _positive(value: Any, name: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= most:
        raise ValueError(f"{name} must be an integer in 1..{most} for SetValued; got {value!r}")
    return int(value)


def best_set_length(
    length_shares: Any, *, items: int, epsilon: float, n: int, frequency: float = 0.1, oracle: str = "auto"
) -> int:
    r"""The ``ell`` with the lowest mean squared error of an item's share (Wang et al.'s trade-off).

    ``length_shares[L - 1]`` is the share of respondents whose set has ``L`` items. An item held at share
    ``frequency``, spread over the sets in proportion to their lengths, is estimated at
    ``frequency * sum_L w_L min(1, ell / L)`` (``w_L ~ L s_L``): the bias of truncating longer sets; the
    variance is :meth:`SetValued.variance` at that share. Sets longer than the largest ``ell`` considered
    (the longest length with a share) are not allowed.

    Parameters
    ----------
    length_shares : array_like
        ``length_shares[L - 1]``: the share of respondents whose set has
        ``L`` items; non-negative, adding up to 1.
    items : int
        The number of items ``k``.
    epsilon : float
        The privacy loss of one whole report, ``> 0``.
    n : int
        The number of respondents.
    frequency : float, default 0.1
        The item share the error is computed at.
    oracle : {"auto", "grr", "oue", "olh"}, default "auto"
        The frequency oracle, as for :class:`SetValued`.

    Returns
    -------
    int
        The padded length ``ell`` with the lowest mean squared error.

    Raises
    ------
    ValueError
        ``length_shares`` that are not shares of set lengths.

    Notes
    -----
    With :math:`w_L \propto L s_L`, the expected estimate is
    :math:`f \sum_L w_L \min(1, \ell / L)`; the error minimised is its
    squared bias plus the variance at that share.

    Examples
    --------
    >>> import deniable as dn
    >>> dn.best_set_length([0.5, 0.3, 0.2], items=50, epsilon=1.0, n=10_000)
    2
    >>> dn.best_set_length([0.5, 0.3, 0.2], items=50, epsilon=4.0, n=100_000)
    3
    """
    shares = np.asarray(length_shares, dtype=float)
    if shares.ndim != 1 or shares.size == 0 or (shares < 0).any() or not np.isclose(shares.sum(), 1.0):
        raise ValueError("length_shares must be the shares of set lengths 1, 2, ... (non-negative, adding up to 1)")
    lengths = np.arange(1, shares.size + 1)
    weights = lengths * shares / float(np.dot(lengths, shares))
    best, best_error = 1, np.inf
    for ell in range(1, shares.size + 1):
        m = SetValued(range(items), epsilon=epsilon, max_items=shares.size, ell=ell, oracle=oracle)
        kept = frequency * float(np.dot(weights, np.minimum(1.0, ell / lengths)))
        error = (frequency - kept) ** 2 + float(m.variance(n, np.full(items, kept))[0])
        if error < best_error:
            best, best_error = ell, error
    return best
