"""How far fake reports can move an estimate: the manipulation sensitivity of each mechanism.

Local randomization hides each respondent's answer, and so it hides a liar
too: a fake respondent may send any well-formed report. For a pure frequency
oracle (support probabilities ``p*``, ``q*``) the estimate of category ``v``
is the mean over the ``N`` reports of one report's debiased contribution

    ``z_v(y) = (1[v in S(y)] - q*_v) / (p*_v - q*_v)``,

which lies in ``[-q*/(p*-q*), (1-q*)/(p*-q*)]``. Hence (Cao, Jia & Gong,
USENIX Security 2021; Cheu, Smith & Ullman 2021):

* **output manipulation** (a fake report chosen freely): ``m`` fake reports
  among ``N`` change the expected estimate of ``v`` by
  ``(m/N) ((s - q*)/(p*-q*) - f_v)`` where ``s`` is the fakes' support rate of
  ``v``; at most ``(m/N)(1 - q*)/(p*-q*)`` upwards (``s = 1``, ``f_v = 0``),
  :attr:`Manipulation.output`. For GRR with k = 1,024 at epsilon = 1 that is
  596 per fake report, for OUE ``2 e^eps / (e^eps - 1) = 3.16``.
* **input manipulation** (a fake user with a chosen true value, then the
  honest randomizer): ``s = p*`` for the chosen value and ``q*`` otherwise, so
  at most ``m/N`` (:attr:`Manipulation.input`, 1 for every unbiased oracle).
* **realised, worst case**: whatever the genuine reports, ``m`` fakes among
  ``N`` reports move the estimate from the one the ``N - m`` genuine reports
  give by at most ``(m/N) / (p*-q*)`` (the range of ``z_v``;
  :attr:`Manipulation.spread`), which is :meth:`deniable.Estimate.manipulation_bound`.
* **a set of targets** ``T`` (Cao et al.'s overall gain): the fakes raise
  ``sum_{t in T} f_t`` by ``beta (G - f_T)`` in expectation with
  ``beta = m/N`` the fraction of fakes and
  ``G = max_y sum_{t in T} z_t(y) = (max_y |S(y) ∩ T| - r q*) / (p*-q*)``
  (:attr:`Manipulation.target_gain`): the most targets one report can
  support decides it. It is 1 for GRR, ``r`` for unary encodings and subset
  selection with ``omega >= r``, and is found exactly for local hashing (every
  hash of the family is tried) and Hadamard response (every output is tried).

RAPPOR is decoded by least squares over its Bloom filters, not by support
counts: its figures come from the decode's weights, exactly, per cohort
(:mod:`deniable.mechanisms._rappor_manipulation`; a mechanism states such
figures itself through ``_own_manipulation(targets)``).

Count-mean sketches (CMS, HCMS) have the same estimator over their listed
strings, with ``q*`` over the random hash seed, and so the same per-category
figures (the gain on a set of targets is not derived for them).

For a numeric mechanism the debiased report is affine in the report, so one
fake moves the mean by at most the range of the debiased reports over ``N``
(:attr:`Manipulation.spread`, in the values' units; infinite for unbounded
noise such as Laplace's) against ``(high - low)/N`` for a fake value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Manipulation", "manipulation", "frequency_sensitivity", "target_positions"]


@dataclass(frozen=True, eq=False)
class Manipulation:
    r"""The worst-case shift of a mechanism's estimates per fake report.

    Every figure is a shift per fake report in units of ``1/N`` (``N`` the
    number of reports, fakes included): ``m`` fakes move an estimate by at
    most ``m/N`` times it.

    ``m.manipulation(targets=None)`` makes it.

    Parameters
    ----------
    mechanism : str
        The mechanism's name.
    output : numpy.ndarray or float
        Per category (frequency oracles) or one number (numeric): the
        largest rise of the expected estimate per chosen fake report, from a
        category nobody holds, :math:`(1 - q^*) / (p^* - q^*)`.
    input : numpy.ndarray or float
        The same for a fake user with a chosen true value run through the
        honest randomizer: 1 for every unbiased frequency oracle,
        ``high - low`` for a numeric mechanism.
    spread : numpy.ndarray or float
        The range of one report's debiased contribution,
        :math:`1 / (p^* - q^*)`: ``m`` fakes among ``N`` reports move the
        realised estimate from the genuine reports' one by at most
        ``m spread / N``, whatever the data.
    targets : tuple, optional
        The target categories of ``target_gain`` (empty: none asked).
    target_gain : float, optional
        :math:`\max_y \sum_{t \in T} z_t(y)`, the most a fake report adds to
        the targets' summed estimate; the maximal-gain attack's overall gain
        is :math:`\beta (\mathrm{target\_gain} - f_T)` for a fraction
        :math:`\beta` of fakes.
    domain : tuple, optional
        The categories the per-category figures are aligned with (None:
        numeric).

    Examples
    --------
    >>> import deniable as dn
    >>> sens = dn.OUE(8, epsilon=1.0).manipulation(targets=[0, 1])
    >>> sens
    Manipulation(OUE: per fake report, output 3.164/N, input 1/N, worst realised 4.328/N...)
    >>> round(sens.target_gain, 3)
    6.328
    >>> round(float(dn.GRR(8, epsilon=1.0).manipulation().bound(10, 1000)[0]), 4)
    0.0566
    """

    mechanism: str
    output: NDArray[np.float64] | float
    input: NDArray[np.float64] | float
    spread: NDArray[np.float64] | float
    targets: tuple[Any, ...] = ()
    target_gain: float | None = None
    domain: tuple[Any, ...] | None = field(default=None, repr=False)

    def bound(self, m_fake: int, n: int) -> NDArray[np.float64] | float:
        """The most ``m_fake`` fake reports among ``n`` can move each estimate: ``m_fake * spread / n``."""
        m, total = _check_counts(m_fake, n)
        return np.asarray(self.spread) * m / total if np.ndim(self.spread) else float(self.spread) * m / total

    def gain(self, fake_fraction: float, target_share: float = 0.0) -> float:
        """Expected overall gain of the maximal-gain attack: ``beta (target_gain - f_T)``.

        ``fake_fraction`` is ``beta = m / N`` (fakes among all reports) and
        ``target_share`` the targets' summed genuine share ``f_T``.
        """
        if self.target_gain is None:
            raise ValueError("no targets: call manipulation(targets=[...]) first")
        if not 0 <= fake_fraction <= 1:
            raise ValueError(f"fake_fraction must be in [0, 1]; got {fake_fraction!r}")
        return float(fake_fraction * (self.target_gain - target_share))

    def __repr__(self) -> str:
        def one(x: Any) -> str:
            return f"{float(np.max(x)):.4g}"

        text = (f"Manipulation({self.mechanism}: per fake report, output {one(self.output)}/N, "
                f"input {one(self.input)}/N, worst realised {one(self.spread)}/N")
        if self.target_gain is not None:
            text += f"; {len(self.targets)} targets: gain {self.target_gain:.4g} per unit fake fraction"
        return text + ")"


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative int; got {value!r}")
    return int(value)


def _check_counts(m_fake: object, n: object) -> tuple[int, int]:
    m, total = _count(m_fake, "m_fake"), _count(n, "n")
    if m > total or total == 0:
        raise ValueError(f"m_fake must be at most n (the reports, fakes included) and n >= 1; got {m}, {total}")
    return m, total


def target_positions(mechanism: Any, targets: Any) -> NDArray[np.int64]:
    """The sorted, distinct positions of ``targets`` among the mechanism's categories (at least one)."""
    positions = np.unique(mechanism.domain_obj.encode(list(targets)))
    if positions.size == 0:
        raise ValueError("targets must name at least one category")
    return positions


def frequency_sensitivity(
    p_star: NDArray[np.float64], q_star: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(output, spread)`` of a pure oracle: ``(1 - q*)/(p* - q*)`` and ``1/(p* - q*)`` per category."""
    gap = np.asarray(p_star, dtype=float) - np.asarray(q_star, dtype=float)
    return (1 - np.asarray(q_star, dtype=float)) / gap, 1 / gap


def manipulation(mechanism: Any, targets: Any = None) -> Manipulation:
    """The manipulation sensitivity of ``mechanism`` (:class:`Manipulation`).

    ``targets`` (categories of a frequency oracle) adds the maximal gain one
    fake report makes on their summed estimate, from the most of them one
    report can support (``mechanism.max_support``).
    """
    own = getattr(mechanism, "_own_manipulation", None)
    if own is not None:  # a mechanism not decoded by support counts (RAPPOR)
        return own(targets)
    if hasattr(mechanism, "support_rates"):
        try:
            p, q = mechanism.support_rates()
        except NotImplementedError:
            raise NotImplementedError(
                f"{mechanism.name} is decoded by least squares; its manipulation sensitivity is not "
                "derived (use a pure frequency oracle)"
            ) from None
        k = len(mechanism.domain)  # a sketch lists strings, maybe none: then one figure for every string
        p, q = (np.broadcast_to(np.asarray(x, dtype=float), (k,) if k else ()) for x in (p, q))
        output, spread = frequency_sensitivity(p, q)
        gain, chosen = None, ()
        if targets is not None:
            if not hasattr(mechanism, "max_support"):
                raise NotImplementedError(f"{mechanism.name}: the gain on a set of targets is not derived")
            positions = target_positions(mechanism, targets)
            most = mechanism.max_support(positions)
            gap = p[positions] - q[positions]
            # max over reports of sum_t (1[t in S] - q_t)/gap_t, gaps equal across categories for these oracles
            if not np.allclose(gap, gap[0]):
                raise NotImplementedError(f"{mechanism.name}: target gain needs equal p* - q* over the targets")
            gain = float((most - q[positions].sum()) / gap[0])
            chosen = tuple(mechanism.domain[i] for i in positions)
        return Manipulation(mechanism.name, output, np.ones_like(output), spread, chosen, gain, mechanism.domain)
    if targets is not None:
        raise ValueError(f"targets apply to frequency oracles, not to {mechanism.name}")
    width = float(mechanism.high - mechanism.low)
    low, high = mechanism.report_range
    if not np.isfinite(high - low):
        return Manipulation(mechanism.name, float("inf"), width, float("inf"))
    ends = (_debiased(mechanism, low), _debiased(mechanism, high))
    return Manipulation(mechanism.name, max(ends) - mechanism.low, width, abs(ends[1] - ends[0]))


def _debiased(mechanism: Any, report: float) -> float:
    """One report's debiased value in the values' units: the mechanism's own aggregate of it, debiased
    (``mid + half (y_t - b0) / b1``; the estimate is the mean of these, so affine in each report)."""
    stat = mechanism._aggregate_checked(np.array([float(report)]))
    return float(mechanism._mid + mechanism._half * (stat.total - mechanism._b0) / mechanism._b1)
