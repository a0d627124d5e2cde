"""Tests at the collector that flag an aggregate fake reports may have pushed.

Each test returns a :class:`Detection`: a statistic, its p-value under the
stated null hypothesis (every report honest), and whether it is below the
false-alarm rate ``alpha`` asked for. The p-values are exact or rest on a
stated approximation; ``tests/stat/test_detection_stat.py`` measures the
false-alarm rate on honest data and the power against each attack of
:mod:`deniable.attacks`.

* :func:`unary_count_test` (unary encodings): the number of 1-bits in an honest
  report is ``Bernoulli(p) + Binomial(k - 1, q)`` whatever the value, so the
  histogram of the reports' counts has a known law. Pearson's chi-square
  (bins merged to at least 5 expected) flags reports supporting too many
  items, too few, or too uniform a number (the padded maximal-gain attack).
* :func:`frequency_test` (every pure oracle): an estimate significantly
  below 0 cannot come from honest reports (their shares are >= 0), nor can
  unary reports whose total support differs from what ``n`` honest reports
  give. Fakes that push targets up push the other items down, below 0 for
  the items nobody holds. One-sided normal tests, Bonferroni over the ``k``
  categories (and the total).
* :func:`change_test` (two rounds): the shift of each estimate between two
  rounds of the same population, against the two rounds' standard errors;
  an attack that starts between the rounds moves its targets by far more
  than sampling allows. Two-sided normal tests, Bonferroni over ``k``.
* :func:`supporting_all_test` (unary, local hashing, subset selection,
  Hadamard, DBitFlip): the reports that support every one of a suspected
  set of targets (DBitFlip: as many as its ``d`` sampled buckets hold),
  with the rate at which honest reports do (exact), so their excess is
  tested by an exact binomial tail; the detection of Cao et al. (frequent
  itemsets of the supported sets), for a given itemset.
* :func:`repeated_reports_test` (RAPPOR): a bit vector sent within one
  cohort far more often than honest reports, whose bits are independent,
  can send it (a union bound over every cohort and vector); RAPPOR's
  maximal-gain fakes send one fixed vector per cohort.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._intervals import check_alpha

__all__ = [
    "Detection", "unary_count_test", "frequency_test", "change_test", "shares_change", "supporting_all_test",
    "repeated_reports_test", "honest_count_pmf",
]


@dataclass(frozen=True)
class Detection:
    """The outcome of one detection test.

    ``flagged`` is ``p_value <= alpha``: the aggregate looks manipulated.

    Parameters
    ----------
    test : str
        The test's name.
    statistic : float
        Its statistic (a chi-square, a count, or the largest standardized
        shift).
    p_value : float
        The probability, were every report honest, of a statistic at least
        as extreme (Bonferroni-adjusted where the test makes several).
    alpha : float
        The false-alarm rate asked for.
    items : tuple, optional
        The categories the test points at (the significant ones), if any.
    detail : dict, optional
        Further figures (counts, thresholds, masks).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(2)
    >>> m = dn.OUE(16, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(16, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [13, 14, 15], 400, rng=rng)
    >>> poisoned = np.concatenate([genuine, fakes])
    >>> d = dn.supporting_all_test(m, poisoned, [13, 14, 15])
    >>> d.test, d.flagged, d.items
    ('supporting-all', True, (13, 14, 15))
    >>> d.to_dict()["flagged"]
    True
    """

    test: str
    statistic: float
    p_value: float
    alpha: float
    items: tuple[Any, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        return self.p_value <= self.alpha

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields (a statistic that is not finite, as for a share with no spread, is None)."""
        statistic = float(self.statistic) if math.isfinite(self.statistic) else None
        return {"test": self.test, "statistic": statistic, "p_value": self.p_value, "alpha": self.alpha,
                "flagged": self.flagged, "items": [_plain(v) for v in self.items]}

    def __repr__(self) -> str:
        verdict = "FLAGGED" if self.flagged else "not flagged"
        items = f", items {list(self.items)[:8]!r}" + ("..." if len(self.items) > 8 else "") if self.items else ""
        return (f"Detection({self.test}: {verdict} at alpha={self.alpha:g}; statistic {self.statistic:.4g}, "
                f"p-value {self.p_value:.3g}{items})")


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def honest_count_pmf(k: int, p: float, q: float) -> NDArray[np.float64]:
    """``P(count = c)`` for ``c = 0..k``: the 1-bits of an honest unary report, ``Bernoulli(p) + Binomial(k-1, q)``."""
    from scipy import stats

    others = stats.binom.pmf(np.arange(k), k - 1, q)
    pmf = np.zeros(k + 1)
    pmf[:k] += (1 - p) * others
    pmf[1:] += p * others
    return pmf


def _unary_rates(mechanism: Any) -> tuple[float, float]:
    from deniable.mechanisms._unary import UnaryEncoding

    if not isinstance(mechanism, UnaryEncoding):
        raise TypeError(f"unary_count_test needs a unary encoding (SUE, OUE); got {mechanism.name}")
    return float(mechanism.p), float(mechanism.q)


def unary_count_test(mechanism: Any, reports: Any, alpha: float = 1e-3) -> Detection:
    r"""Is the histogram of the reports' numbers of 1-bits that of honest reports? (unary encodings)

    Pearson's chi-square against ``honest_count_pmf`` with the bins merged
    (smallest expectations first) to at least 5 expected reports each; the
    p-value is the chi-square tail with ``groups - 1`` degrees of freedom.
    ``detail`` holds ``counts`` (one per report) and ``upper``, the count
    above which an honest report lies with probability below ``alpha / n``.

    Parameters
    ----------
    mechanism : SUE or OUE
        The unary encoding that made the reports.
    reports : array_like
        The reports, one bit vector per row.
    alpha : float, default 1e-3
        The false-alarm rate.

    Returns
    -------
    Detection
        The chi-square statistic and its p-value.

    Notes
    -----
    An honest report's number of 1-bits is
    :math:`\mathrm{Bernoulli}(p) + \mathrm{Binomial}(k - 1, q)` whatever its
    value (:func:`honest_count_pmf`).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(2)
    >>> m = dn.OUE(16, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(16, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [13, 14, 15], 400, rng=rng)
    >>> poisoned = np.concatenate([genuine, fakes])
    >>> dn.unary_count_test(m, genuine).flagged, dn.unary_count_test(m, poisoned).flagged
    (False, True)
    """
    from scipy import stats

    from deniable.testing import merge_bins

    a = check_alpha(alpha)
    p, q = _unary_rates(mechanism)
    counts = mechanism.unpack(reports).sum(axis=1, dtype=np.int64)
    n = counts.size
    if n == 0:
        raise ValueError("unary_count_test needs at least one report")
    pmf = honest_count_pmf(mechanism.k, p, q)
    labels = merge_bins(n * pmf)
    groups = int(labels.max()) + 1
    observed = np.bincount(labels[counts], minlength=groups).astype(float)
    expected = np.bincount(labels, weights=n * pmf, minlength=groups)
    statistic = float(((observed - expected) ** 2 / expected).sum()) if groups > 1 else 0.0
    p_value = float(stats.chi2.sf(statistic, groups - 1)) if groups > 1 else 1.0
    tail = np.cumsum(pmf[::-1])[::-1]  # P(count >= c)
    upper = int(np.flatnonzero(tail > a / n)[-1])
    return Detection("unary-count", statistic, p_value, a, (),
                     {"counts": counts, "upper": upper, "groups": groups, "n": n})


def frequency_test(estimate: Any, alpha: float = 1e-3) -> Detection:
    r"""Could honest reports have given these frequencies? (any pure oracle's unbiased :class:`deniable.Estimate`)

    For each category ``z_v = f_v / se_v``; a share is never below 0, so
    ``P(z_v <= -c) <= Phi(-c)`` (normal approximation to the estimate). The
    p-value is ``k Phi(min z)``, Bonferroni over the categories, and the
    items are those with ``z_v`` below ``-z_{alpha/k}``.

    Parameters
    ----------
    estimate : Estimate
        A pure oracle's unbiased estimate with standard errors.
    alpha : float, default 1e-3
        The false-alarm rate.

    Returns
    -------
    Detection
        The statistic :math:`-\min_v z_v`, its p-value and the categories
        significantly below 0.

    Raises
    ------
    ValueError
        A post-processed estimate or one without standard errors.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(2)
    >>> m = dn.GRR(16, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(4, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [15], 1000, rng=rng)
    >>> dn.frequency_test(m.estimate(genuine)).flagged
    False
    >>> dn.frequency_test(m.estimate(np.concatenate([genuine, fakes]))).flagged
    True
    """
    from scipy import stats

    a = check_alpha(alpha)
    if estimate.std_errors is None or estimate.post_processing != "none":
        raise ValueError("frequency_test needs an unbiased estimate with standard errors (not post-processed)")
    k = len(estimate.domain)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(estimate.std_errors > 0, estimate.frequencies / estimate.std_errors, np.inf)
    worst = float(np.min(z))
    p_value = min(1.0, k * float(stats.norm.cdf(worst)))
    cut = float(stats.norm.isf(a / k))
    items = tuple(estimate.domain[i] for i in np.flatnonzero(z < -cut))
    return Detection("frequency", -worst, p_value, a, items, {"z": z, "critical": cut})


def change_test(before: Any, after: Any, alpha: float = 1e-3) -> Detection:
    r"""Did any share move between two rounds by more than sampling allows?

    ``z_v = (f_v after - f_v before) / sqrt(se_before^2 + se_after^2)`` for
    two independent rounds over the same categories and the same population
    (population-target standard errors include the sampling of respondents);
    the p-value is ``k P(|Z| >= max |z|)``, Bonferroni over the categories, and
    the items are those beyond ``z_{alpha/(2k)}``, largest rise first.
    A genuine change in the population is flagged too: the test says that
    the shares moved, not why.

    Parameters
    ----------
    before, after : Estimate
        Unbiased estimates of two independent rounds over the same
        categories.
    alpha : float, default 1e-3
        The false-alarm rate.

    Returns
    -------
    Detection
        The largest :math:`|z_v|`, its p-value and the categories beyond the
        critical value, largest rise first.

    Raises
    ------
    ValueError
        Different categories, or an estimate without standard errors.

    Notes
    -----
    :math:`z_v = (\hat f^{\mathrm{after}}_v - \hat f^{\mathrm{before}}_v)
    / \sqrt{SE_{\mathrm{before},v}^2 + SE_{\mathrm{after},v}^2}` and the p-value is
    :math:`k \, P(|Z| \ge \max_v |z_v|)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(2)
    >>> m = dn.OUE(16, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(16, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [13, 14, 15], 400, rng=rng)
    >>> poisoned = np.concatenate([genuine, fakes])
    >>> later = m.privatize_many(rng.choice(16, size=4000), rng=rng)
    >>> d = dn.change_test(m.estimate(genuine), m.estimate(np.concatenate([later, fakes])))
    >>> d.flagged, d.items
    (True, (13, 14, 15))
    """
    if tuple(before.domain) != tuple(after.domain):
        raise ValueError("change_test needs two estimates over the same categories")
    if before.std_errors is None or after.std_errors is None:
        raise ValueError("change_test needs unbiased estimates with standard errors (not post-processed)")
    return shares_change(tuple(before.domain), (before.frequencies, before.std_errors),
                         (after.frequencies, after.std_errors), alpha)


def shares_change(domain: tuple[Any, ...], before: tuple[Any, Any], after: tuple[Any, Any], alpha: float) -> Detection:
    """:func:`change_test` on ``(frequencies, std_errors)`` arrays (as results documents hold them)."""
    from scipy import stats

    a = check_alpha(alpha)
    (f0, se0), (f1, se1) = ((np.asarray(f, dtype=float), np.asarray(s, dtype=float)) for f, s in (before, after))
    k = len(domain)
    se = np.hypot(se0, se1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (f1 - f0) / se, 0.0)
    worst = float(np.max(np.abs(z)))
    p_value = min(1.0, k * 2 * float(stats.norm.sf(worst)))
    cut = float(stats.norm.isf(a / (2 * k)))
    beyond = np.flatnonzero(np.abs(z) > cut)
    order = beyond[np.argsort(-z[beyond], kind="stable")]
    return Detection("change", worst, p_value, a, tuple(domain[i] for i in order), {"z": z, "critical": cut})


def supporting_all_test(mechanism: Any, reports: Any, targets: Any, alpha: float = 1e-3) -> Detection:
    """The reports that support every one of ``targets``, against the rate honest reports do.

    An honest report supports all ``r >= 2`` targets with probability at
    most ``pi = max_x P(T ⊆ S(y) | x)`` (exact per mechanism: ``p q^(r-1)``
    for unary encodings; for local hashing the share of the family's hashes
    putting all targets in one bucket times ``p``; 0 for GRR and subset
    selection with ``omega < r``; by enumeration for Hadamard response).
    A DBitFlip report samples ``d`` buckets, so there "every target" means
    ``s = min(r, d)`` of them (with ``r > d``: reports whose sampled buckets
    are all targets, each with bit 1), and ``pi = P(s targets sampled)
    ((s/r) A B^(s-1) + (1 - s/r) B^s)`` with ``A, B`` the rates of a bit 1
    in and out of the value's bucket and ``P(s targets sampled)``
    ``C(k-r, d-r)/C(k, d)`` or ``C(r, d)/C(k, d)``. The
    p-value is the binomial tail ``P(Binomial(n, pi) >= count)``; ``detail``
    holds the boolean mask ``mask`` of those reports (the ones Cao et al.'s
    detection would remove) and ``pi``.

    Parameters
    ----------
    mechanism : Mechanism
        The oracle that made the reports (unary, local hashing, subset
        selection, Hadamard response, DBitFlip or GRR).
    reports : array_like
        The reports.
    targets : sequence
        The suspected targets, at least two distinct categories.
    alpha : float, default 1e-3
        The false-alarm rate.

    Returns
    -------
    Detection
        The count of reports supporting every target and its binomial
        p-value.

    Raises
    ------
    ValueError
        Fewer than two distinct targets.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(2)
    >>> m = dn.OUE(16, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(16, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [13, 14, 15], 400, rng=rng)
    >>> poisoned = np.concatenate([genuine, fakes])
    >>> d = dn.supporting_all_test(m, poisoned, [13, 14, 15])
    >>> d.flagged, int(d.detail["mask"].sum()) >= 400
    (True, True)
    >>> dn.supporting_all_test(m, genuine, [13, 14, 15]).flagged
    False
    """
    from scipy import stats

    a = check_alpha(alpha)
    positions = np.unique(mechanism.domain_obj.encode(list(targets)))
    if positions.size < 2:
        raise ValueError("supporting_all_test needs at least two targets")
    checked = mechanism.validate(reports)
    supported = np.zeros(len(checked), dtype=np.int64)
    for t in positions:
        supported += mechanism.supports(checked, mechanism.domain[int(t)])
    mask = supported >= _most_supported(mechanism, positions)
    pi = _honest_all_rate(mechanism, positions)
    count, n = int(mask.sum()), int(mask.size)
    p_value = 1.0 if count == 0 else float(stats.binom.sf(count - 1, n, pi)) if pi > 0 else 0.0
    items = tuple(mechanism.domain[int(t)] for t in positions) if p_value <= a else ()
    return Detection("supporting-all", float(count), p_value, a, items,
                     {"mask": mask, "pi": pi, "expected": n * pi})


def repeated_reports_test(mechanism: Any, reports: Any, alpha: float = 1e-3) -> Detection:
    r"""Does any RAPPOR bit vector recur within a cohort more often than honest reports allow?

    An honest report's ``B = num_bits`` bits are independent given its
    value, each 1 with probability ``q*`` on the value's Bloom bits (at most
    ``h = num_hashes`` of them) and ``p* < q*`` elsewhere, so it equals a
    vector ``y`` with ``w`` ones with probability at most
    ``pi_w = q*^min(h, w) p*^(w - min(h, w)) (1 - p*)^(B - w)`` (the filter
    on ``y``'s ones), whatever its value, in or out of the candidates. A
    vector sent ``c`` times among a cohort's ``N_c`` reports has the
    conservative p-value ``P(Binomial(N_c, pi_w) >= c)``; the test's
    p-value is the smallest, times the ``cohorts * 2^B`` vectors that could
    have been sent (Bonferroni over all of them, observed or not). ``detail``
    holds ``mask``, the reports whose vector is significant on its own at
    ``alpha`` (those a detect-and-drop defence removes), and ``largest``, the
    most times one vector was sent in one cohort, and ``tail``, the smallest
    unadjusted p-value.

    Parameters
    ----------
    mechanism : RAPPOR
        The mechanism that made the reports.
    reports : array_like
        The reports.
    alpha : float, default 1e-3
        The false-alarm rate.

    Returns
    -------
    Detection
        The largest repeat count and its adjusted p-value.

    Raises
    ------
    TypeError
        A mechanism other than RAPPOR.

    Notes
    -----
    :math:`p = \min\bigl(1, m 2^B \min_{c, y} P(\mathrm{Bin}(N_c, \pi_{|y|}) \ge n_{c,y})\bigr)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(2)
    >>> m = dn.RAPPOR(16, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8)
    >>> genuine = m.privatize_many(rng.choice(16, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [13, 14, 15], 400, rng=rng)
    >>> dn.repeated_reports_test(m, genuine).flagged
    False
    >>> found = dn.repeated_reports_test(m, np.concatenate([genuine, fakes]))
    >>> found.flagged, int(found.detail["mask"][-400:].sum())
    (True, 400)
    """
    from scipy import stats

    from deniable.mechanisms import RAPPOR

    a = check_alpha(alpha)
    if not isinstance(mechanism, RAPPOR):
        raise TypeError(f"repeated_reports_test needs RAPPOR reports; got {mechanism.name}")
    checked = mechanism.validate(reports)
    n = len(checked)
    if n == 0:
        raise ValueError("repeated_reports_test needs at least one report")
    cohorts = checked["cohort"].astype(np.uint64)
    keys = np.concatenate([cohorts[:, None], checked["bits"].reshape(n, -1).astype(np.uint64)], axis=1)
    rows, inverse, repeats = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    ones = np.bitwise_count(rows[:, 1:]).sum(axis=1, dtype=np.int64)
    sizes = np.bincount(cohorts.astype(np.int64), minlength=mechanism.num_cohorts)[rows[:, 0].astype(np.int64)]
    p, q, h, b = float(mechanism.p_star), float(mechanism.q_star), mechanism.num_hashes, mechanism.num_bits
    on = np.minimum(ones, h)
    pi = q**on * p ** (ones - on) * (1 - p) ** (b - ones)
    tails = stats.binom.sf(repeats - 1, sizes, pi)
    vectors = mechanism.num_cohorts * 2.0**b
    p_value = float(min(1.0, vectors * float(tails.min())))
    mask = (vectors * tails <= a)[inverse.ravel()]
    return Detection("repeated-reports", float(repeats.max()), p_value, a, (),
                     {"mask": mask, "largest": int(repeats.max()), "tail": float(tails.min()), "vectors": vectors})


def _most_supported(mechanism: Any, positions: NDArray[np.int64]) -> int:
    """The targets a report must support to count: all ``r``, or DBitFlip's ``min(r, d)``."""
    from deniable.mechanisms import DBitFlip

    return min(positions.size, mechanism.d) if isinstance(mechanism, DBitFlip) else int(positions.size)


def _honest_all_rate(mechanism: Any, positions: NDArray[np.int64]) -> float:
    """``max_x P(every target in S(y) | x)`` for an honest report (exact; DBitFlip: ``min(r, d)`` of them)."""
    from deniable.mechanisms import GRR, BinaryRR, DBitFlip, HadamardResponse, SubsetSelection
    from deniable.mechanisms._hashing import LocalHashing
    from deniable.mechanisms._unary import UnaryEncoding

    r = positions.size
    if isinstance(mechanism, DBitFlip):
        k, d, s = mechanism.k, mechanism.d, min(r, mechanism.d)
        sampled = math.comb(k - r, d - r) if r <= d else math.comb(r, d)
        one = float(mechanism._ra) / float(mechanism._ra + mechanism._rb)  # a bit 1 on the value's bucket
        bits = (s / r) * one * (1 - one) ** (s - 1) + (1 - s / r) * (1 - one) ** s
        return float(sampled / math.comb(k, d) * bits)
    if isinstance(mechanism, UnaryEncoding):
        return float(mechanism.p * mechanism.q ** (r - 1))
    if isinstance(mechanism, (GRR, BinaryRR)):
        return 0.0
    if isinstance(mechanism, SubsetSelection):
        w, k = mechanism.omega, mechanism.k
        if r > w:
            return 0.0
        p = float(mechanism.prob)  # x in T: x kept and the other r-1 among the w-1 drawn from k-1
        with_x = p * math.comb(k - r, w - r) / math.comb(k - 1, w - 1)
        without = (1 - p) * math.comb(k - 1 - r, w - r) / math.comb(k - 1, w) if k - 1 - r >= w - r else 0.0
        drawn = p * math.comb(k - 1 - r, w - 1 - r) / math.comb(k - 1, w - 1) if w - 1 >= r else 0.0
        return float(max(with_x, without + drawn))
    if isinstance(mechanism, LocalHashing):
        matrices, best = mechanism.colliding_hashes(positions, every=True)
        share = matrices.size / (1 << (mechanism.hash_bits + mechanism.m - 1)) if best == r else 0.0
        return float(share * max(float(mechanism.prob), (1 - float(mechanism.prob)) / (mechanism.g - 1)))
    if isinstance(mechanism, HadamardResponse):
        y = np.arange(mechanism.K, dtype=np.uint64)[:, None]
        from deniable.mechanisms._walsh import parity

        inside_all = (parity(y & (positions.astype(np.uint64)[None, :] + np.uint64(1))) == 0).all(axis=1)
        p = float(mechanism.prob)
        x_rows = np.arange(mechanism.k, dtype=np.uint64)[None, :] + np.uint64(1)
        own = parity(y & x_rows) == 0  # y in C_x, per output and value
        prob = np.where(own, 2 * p / mechanism.K, 2 * (1 - p) / mechanism.K)  # P(y | x)
        return float((prob * inside_all[:, None]).sum(axis=0).max())
    raise TypeError(f"supporting_all_test is not implemented for {mechanism.name}")
