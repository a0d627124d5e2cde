"""Calibrated statistical checks for testing randomized code (public API).

Like ``numpy.testing`` for array code, this is a public, documented module:
the checks deniable's own test suite uses on its mechanisms, for anyone who
tests a randomized mechanism (their own, or deniable's after a change). The
names in ``__all__`` are stable. It needs scipy (imported when a check runs).

Every check takes the false-failure probability ``alpha`` it may spend (the
probability that a *correct* sampler fails it) and returns a
:class:`CheckResult` with the statistic, the critical value, ``alpha``,
``passed`` and a message that says what was compared, so a failing test
prints enough to reproduce it. Divide ``alpha`` yourself when one test makes
several assertions (Bonferroni: ``alpha / m`` each, see :func:`bonferroni`).

* :func:`chi_square_gof` -- counts of a discrete sampler against its pmf
  (bins merged by :func:`merge_bins` until each expects at least
  ``MIN_EXPECTED = 5``, the textbook precondition).
* :func:`ks_gof` -- continuous samples against a cdf, critical value from the
  exact finite-n Kolmogorov distribution ``scipy.stats.kstwo(n).isf(alpha)``;
  :func:`ks_gof_discrete` -- the same against a discrete distribution.
* :func:`wilson_interval`, :func:`clopper_pearson` -- two-sided intervals for
  a binomial rate; :func:`proportion_check`
  tests a count of successes against its claimed rate (exact binomial).
* :func:`coverage_band` / :func:`coverage_check` -- the accepted number of
  hits of ``R`` confidence intervals at nominal ``level`` (a two-sided
  binomial test; for ``R = 2000``, 95%, ``alpha = 1e-6`` it is 1849..1944).
* :func:`mean_check` -- a sample mean against its known expectation;
  :func:`estimate_check` -- estimates against their expectation within ``z``
  stated standard errors.
* :func:`variance_ratio_check` -- a sample variance against its formula.
* :func:`independence_2x2` -- two binary variables are independent.

:func:`recording` collects the checks a block of code makes, so a test's
false-failure rate (the sum of their ``alpha``) can be read off a run;
:func:`family` makes several checks one (a power check that some member fails).

A sampler that is wrong by a fixed amount fails these checks with
probability tending to 1 as the sample grows; pair each check with a
deliberately wrong sampler (a power check) to show the sample is large
enough.

>>> import numpy as np
>>> counts = np.random.default_rng(1).multinomial(10_000, [0.5, 0.3, 0.2])
>>> chi_square_gof(counts, [0.5, 0.3, 0.2], alpha=1e-6).passed
True
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ParamSpec

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deniable._intervals import Interval, clopper_pearson, wilson_interval, z_for
from deniable._intervals import check_alpha as _check_alpha

__all__ = [
    "MIN_EXPECTED",
    "merge_bins",
    "CheckResult",
    "Interval",
    "bonferroni",
    "recording",
    "family",
    "chi_square_gof",
    "ks_gof",
    "ks_gof_discrete",
    "wilson_interval",
    "clopper_pearson",
    "proportion_check",
    "coverage_band",
    "coverage_check",
    "mean_check",
    "estimate_check",
    "variance_ratio_check",
    "independence_2x2",
    "z_for",
]

MIN_EXPECTED = 5.0
"""The smallest expected count per bin of a chi-square test; :func:`merge_bins` merges bins up to it."""


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one calibrated check.

    ``passed`` is False with probability at most ``alpha`` when the null
    hypothesis (the sampler is correct) holds. ``str(result)`` and
    ``message`` describe the comparison; ``details`` holds extra numbers.
    """

    name: str
    statistic: float
    critical_value: float
    alpha: float
    passed: bool
    message: str
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    def __str__(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.message}"

    def __bool__(self) -> bool:
        return bool(self.passed)


_P = ParamSpec("_P")
_RECORDERS: list[tuple[list[CheckResult], bool]] = []  # (results, hide), innermost last


def _hand_on(result: CheckResult) -> CheckResult:
    for made, hide in reversed(_RECORDERS):
        made.append(result)
        if hide:
            break
    return result


def _recorded(check: Callable[_P, CheckResult]) -> Callable[_P, CheckResult]:
    """Hand each result of ``check`` to the open :func:`recording` blocks."""

    @functools.wraps(check)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> CheckResult:
        return _hand_on(check(*args, **kwargs))

    return run


@contextmanager
def recording(*, hide: bool = False) -> Iterator[list[CheckResult]]:
    """Collect the result of every check of this module made inside the block.

    >>> with recording() as made:
    ...     _ = chi_square_gof([50, 50], [0.5, 0.5], alpha=1e-9)
    ...     _ = coverage_check(1900, 2000, 0.95, alpha=1e-9)
    >>> [r.name for r in made], sum(r.alpha for r in made if r.passed)
    (['chi-square', 'coverage'], 2e-09)

    By the union bound, a correct sampler fails one of the checks that
    passed with probability at most the sum of their ``alpha``: the
    false-failure rate of a test whose assertions are these checks. (A check
    that failed was, in a passing test, a power check on a wrong sampler.)
    Blocks may nest; each gets every result made while it is open, except
    that ``hide=True`` keeps the results made inside from the enclosing
    blocks: for checks used as data (a test that counts how often a check
    rejects), which are not assertions.
    """
    made: list[CheckResult] = []
    _RECORDERS.append((made, hide))
    try:
        yield made
    finally:  # by identity: another open block may hold an equal list
        del _RECORDERS[next(i for i, (other, _) in enumerate(_RECORDERS) if other is made)]


def family(results: Iterable[CheckResult], *, label: str = "") -> CheckResult:
    """Several checks as one, which passes when every member passes.

    Its ``alpha`` is the sum of the members' (the union bound on a correct
    sampler failing one of them). As a power check, ``not family(checks)``
    says that a wrong sampler fails *some* member: it misses only when every
    member passes. The members are ``details["members"]``; :func:`recording`
    gets the family after them.
    """
    members = list(results)
    failed = [r for r in members if not r.passed]
    where = f" [{label}]" if label else ""
    message = f"{len(failed)} of {len(members)} checks failed{where}" + (f"; first: {failed[0]}" if failed else "")
    alpha = math.fsum(r.alpha for r in members)
    return _hand_on(CheckResult("family", float(len(failed)), 0.0, alpha, not failed, message, {"members": members}))


def bonferroni(alpha: float, comparisons: int) -> float:
    """``alpha / comparisons``: the per-assertion level for a family of assertions."""
    if comparisons < 1:
        raise ValueError(f"comparisons must be >= 1; got {comparisons!r}")
    return _check_alpha(alpha) / comparisons


# ------------------------------------------------------------------ chi-square
def merge_bins(expected: NDArray[np.float64]) -> NDArray[np.int64]:
    """Group labels so that every group expects at least MIN_EXPECTED counts.

    Bins are visited in increasing order of expectation (so tiny bins are
    pooled with each other, not with a large one) and accumulated until a
    group reaches the threshold; a short remainder joins the last group.
    """
    order = np.argsort(expected, kind="stable")
    labels = np.empty(expected.size, dtype=np.int64)
    group, total = 0, 0.0
    for i in order:
        labels[i] = group
        total += expected[i]
        if total >= MIN_EXPECTED:
            group, total = group + 1, 0.0
    if total > 0 and group > 0:  # remainder below the threshold: fold into the last full group
        labels[labels == group] = group - 1
    return labels


@_recorded
def chi_square_gof(
    observed: ArrayLike, expected_probs: ArrayLike, alpha: float, *, label: str = ""
) -> CheckResult:
    """Pearson chi-square goodness of fit of ``observed`` counts to ``expected_probs``.

    Bins with expected count below 5 are merged (smallest first) before the
    test; ``df = groups - 1``; reject when the statistic exceeds
    ``chi2.isf(alpha, df)``. A count in a bin of probability 0 fails at once.
    Raises ValueError when the sample is too small for two groups of 5.
    """
    from scipy import stats

    a = _check_alpha(alpha)
    obs = np.asarray(observed, dtype=float).ravel()
    probs = np.asarray(expected_probs, dtype=float).ravel()
    if obs.shape != probs.shape:
        raise ValueError(f"observed has {obs.size} bins but expected_probs has {probs.size}")
    if (probs < 0).any() or not math.isclose(probs.sum(), 1.0, abs_tol=1e-9):
        raise ValueError(f"expected_probs must be non-negative and sum to 1; sum is {probs.sum()!r}")
    if (obs < 0).any():
        raise ValueError("observed counts must be non-negative")
    n = obs.sum()
    where = f" [{label}]" if label else ""
    impossible = (probs == 0) & (obs > 0)
    if impossible.any():
        bins = np.flatnonzero(impossible)[:5].tolist()
        return CheckResult(
            "chi-square", math.inf, 0.0, a, False,
            f"{int(obs[impossible].sum())} counts in bins of probability 0 (bins {bins}){where}",
        )
    expected = probs * n
    labels = merge_bins(expected)
    groups = int(labels.max()) + 1 if labels.size else 0
    if groups < 2:
        raise ValueError(
            f"chi-square test needs at least two groups expecting >= {MIN_EXPECTED:g} counts; "
            f"n={n:g} is too small{where}"
        )
    obs_g = np.bincount(labels, weights=obs, minlength=groups)
    exp_g = np.bincount(labels, weights=expected, minlength=groups)
    statistic = float(((obs_g - exp_g) ** 2 / exp_g).sum())
    df = groups - 1
    critical = float(stats.chi2.isf(a, df))
    worst = int(np.argmax(np.abs(obs_g - exp_g) / np.sqrt(exp_g)))
    message = (
        f"chi2={statistic:.4g} vs critical {critical:.4g} (df={df}, alpha={a:g}, n={n:g}); "
        f"worst group {worst}: observed {obs_g[worst]:g}, expected {exp_g[worst]:.4g}{where}"
    )
    return CheckResult(
        "chi-square", statistic, critical, a, statistic <= critical, message,
        {"df": df, "n": n, "p_value": float(stats.chi2.sf(statistic, df)), "min_expected": float(exp_g.min())},
    )


# ------------------------------------------------------------------------- KS
@_recorded
def ks_gof(
    samples: ArrayLike, cdf: Callable[[NDArray[np.float64]], Any], alpha: float, *, label: str = ""
) -> CheckResult:
    """One-sample Kolmogorov-Smirnov test of ``samples`` against a continuous ``cdf``.

    ``D = sup |F_n - F|``; critical value ``scipy.stats.kstwo(n).isf(alpha)``
    (exact for continuous F; conservative for a discrete one). For n = 5000
    and alpha = 1e-6 the critical value is 0.03805.
    """
    from scipy import stats

    a = _check_alpha(alpha)
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    n = x.size
    if n == 0:
        raise ValueError("ks_gof needs at least one sample")
    if not np.all(np.isfinite(x)):
        raise ValueError("ks_gof samples must be finite")
    f = np.asarray(cdf(x), dtype=float)
    ranks = np.arange(1, n + 1)
    d_plus = float(np.max(ranks / n - f))
    d_minus = float(np.max(f - (ranks - 1) / n))
    statistic = max(d_plus, d_minus)
    critical = float(stats.kstwo(n).isf(a))
    where = f" [{label}]" if label else ""
    at = x[int(np.argmax(np.maximum(ranks / n - f, f - (ranks - 1) / n)))]
    message = (
        f"KS D={statistic:.4g} vs critical {critical:.4g} (n={n}, alpha={a:g}); "
        f"largest gap at x={at:.6g}{where}"
    )
    return CheckResult("ks", statistic, critical, a, statistic <= critical, message, {"n": n})


# ---------------------------------------------------------------- proportions
def _binomial_band(trials: int, p: float, alpha: float) -> tuple[int, int]:
    """``[low, high]`` with ``P(X < low) <= alpha/2`` and ``P(X > high) <= alpha/2``, ``X ~ Bin(trials, p)``."""
    from scipy import stats

    if p <= 0 or p >= 1:  # a certain outcome: nothing else may happen
        return (0, 0) if p <= 0 else (trials, trials)
    return int(stats.binom.ppf(alpha / 2, trials, p)), int(stats.binom.isf(alpha / 2, trials, p))


@_recorded
def proportion_check(
    successes: int, trials: int, p: float, alpha: float, *, label: str = ""
) -> CheckResult:
    """Is ``successes`` out of ``trials`` consistent with rate ``p``? (exact binomial test)

    Passes when ``successes`` lies in the two-sided exact binomial band of
    ``Binomial(trials, p)`` (each tail at most ``alpha / 2``, as
    :func:`coverage_band`), so a correct sampler fails with probability at
    most ``alpha`` whatever ``trials`` and ``p``. (A normal or Wilson score
    band is not: at ``alpha = 1e-8`` it fails a correct sampler with 10
    expected successes 60 times too often.) ``critical_value`` is the
    distance from the expected count to the nearer band end; the message
    also gives the ``1 - alpha`` Wilson interval of the rate.
    """
    a = _check_alpha(alpha)
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1]; got {p!r}")
    low, high = _binomial_band(trials, p, a)
    wilson = wilson_interval(successes, trials, a)
    rate = successes / trials
    where = f" [{label}]" if label else ""
    message = (
        f"rate {rate:.6g} ({successes}/{trials}); claimed {p:.6g}, accepted {low}..{high} successes "
        f"(exact binomial, alpha={a:g}); Wilson {1 - a:.10g} interval [{wilson.low:.6g}, {wilson.high:.6g}]{where}"
    )
    return CheckResult(
        "binomial", rate, min(trials * p - low, high - trials * p), a, bool(low <= successes <= high), message,
        {"low": low, "high": high, "trials": trials, "successes": successes},
    )


# ------------------------------------------------------------------- coverage
def coverage_band(replicates: int, level: float, alpha: float) -> tuple[int, int]:
    """Accepted range ``[low, high]`` of hits among ``replicates`` intervals of nominal ``level``.

    Two-sided binomial test: ``P(X < low) <= alpha/2`` and
    ``P(X > high) <= alpha/2`` for ``X ~ Binomial(replicates, level)``. For
    2000 replicates, level 0.95, alpha 1e-6: ``(1849, 1944)``.
    """
    a = _check_alpha(alpha)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    if replicates < 1:
        raise ValueError(f"replicates must be >= 1; got {replicates!r}")
    return _binomial_band(replicates, level, a)


@_recorded
def coverage_check(
    hits: int, replicates: int, level: float, alpha: float, *, conservative: bool = False,
    label: str = "",
) -> CheckResult:
    """Does ``hits`` out of ``replicates`` fit intervals of nominal coverage ``level``?

    Two-sided by default (an exact-level method must neither under- nor
    over-cover). ``conservative=True`` tests only for under-coverage, spending
    all of ``alpha`` on the low side; use it for methods that are conservative
    by construction (Clopper-Pearson, intervals clipped to [0, 1]).
    """
    if conservative:
        low, high = coverage_band(replicates, level, min(2 * alpha, 0.999))[0], replicates
    else:
        low, high = coverage_band(replicates, level, alpha)
    where = f" [{label}]" if label else ""
    message = (
        f"{hits}/{replicates} intervals covered the truth ({hits / replicates:.4f}); "
        f"accepted {low}..{high} for nominal {level:g} at alpha={alpha:g}"
        f"{' (one-sided)' if conservative else ''}{where}"
    )
    return CheckResult(
        "coverage", float(hits), float(low), float(alpha), low <= hits <= high, message,
        {"low": low, "high": high, "trials": replicates, "successes": hits},
    )


# -------------------------------------------------------------- mean/variance
def _z_scores(
    name: str, centre: NDArray[np.float64], target: ArrayLike, spread: NDArray[np.float64], critical: float,
    alpha: float, described: str, label: str,
) -> CheckResult:
    """``|centre - target| / spread`` per entry (0 or inf where ``spread`` is 0) against ``critical``."""
    k = centre.size
    goal = np.broadcast_to(np.asarray(target, dtype=float).ravel(), (k,))
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.abs(centre - goal) / spread
    scores = np.where(spread == 0, np.where(centre == goal, 0.0, np.inf), scores)
    worst = int(np.argmax(scores))
    statistic = float(scores[worst])
    where = f" [{label}]" if label else ""
    message = (
        f"max |{name} - expected| / standard error = {statistic:.4g} vs {critical:.4g} "
        f"({described}, k={k}, alpha={alpha:g}); entry {worst}: {name} {centre[worst]:.6g}, "
        f"expected {goal[worst]:.6g}, standard error {spread[worst]:.4g}{where}"
    )
    return CheckResult(name, statistic, critical, alpha, statistic <= critical, message, {"scores": scores})


@_recorded
def mean_check(
    samples: ArrayLike, expected: ArrayLike, alpha: float, *, sd: ArrayLike | None = None, label: str = ""
) -> CheckResult:
    """Do the column means of ``samples`` (shape ``(R,)`` or ``(R, k)``) equal ``expected``?

    Each of the ``k`` columns passes when ``|mean - expected| <= c sd / sqrt(R)``
    with ``c`` for ``alpha / k`` two-sided (Bonferroni over the columns).
    ``sd`` is the known standard deviation of one sample, and then ``c`` is
    the normal quantile; when None, ``sd`` is the sample SD and ``c`` the
    Student t quantile with ``R - 1`` degrees of freedom (exact for normal
    samples; the normal quantile would fail them 1.15 times too often at
    ``R = 2000`` and ``alpha = 1e-8``, 11 times at ``R = 100``).
    """
    from scipy import stats

    a = _check_alpha(alpha)
    x = np.asarray(samples, dtype=float)
    x2 = x.reshape(x.shape[0], -1)
    r, k = x2.shape
    if r < 2:
        raise ValueError("mean_check needs at least 2 samples")
    if sd is None:
        spread, critical = x2.std(axis=0, ddof=1), float(stats.t.isf(a / (2 * k), r - 1))
    else:
        spread, critical = np.broadcast_to(np.asarray(sd, float), (k,)), z_for(a / k)
    return _z_scores("mean", x2.mean(axis=0), expected, spread / math.sqrt(r), critical, a, f"R={r}", label)


@_recorded
def estimate_check(
    estimates: ArrayLike, expected: ArrayLike, std_errors: ArrayLike, alpha: float, *, label: str = ""
) -> CheckResult:
    """Do ``k`` estimates lie within ``z`` standard errors of what they estimate?

    Each passes when ``|estimate - expected| <= z std_error`` with ``z`` for
    ``alpha / k`` two-sided (Bonferroni over the entries): the check of an
    estimator that is approximately normal with a known standard error (a
    debiased frequency from many reports, a mean of many draws). Its
    false-failure probability is ``alpha`` up to the normal approximation's
    error in the far tail.
    """
    a = _check_alpha(alpha)
    centre = np.asarray(estimates, dtype=float).ravel()
    spread = np.broadcast_to(np.asarray(std_errors, dtype=float).ravel(), centre.shape)
    return _z_scores("estimate", centre, expected, spread, z_for(a / centre.size), a, "normal", label)


@_recorded
def variance_ratio_check(
    samples: ArrayLike, expected_variance: ArrayLike, alpha: float, *, label: str = ""
) -> CheckResult:
    """Do the column variances of ``samples`` match ``expected_variance``?

    For normal samples ``(R-1) s^2 / sigma^2 ~ chi2(R-1)``; each of the ``k``
    columns passes when the ratio ``s^2 / sigma^2`` lies in the two-sided
    ``1 - alpha/k`` band of ``chi2(R-1) / (R-1)``. A heavier-tailed column
    (excess kurtosis ``kappa`` > 0, e.g. an estimator built from a small
    count) has ``Var(s^2 / sigma^2) = 2/(R-1) + kappa/R``, so the band is
    widened around 1 by ``sqrt(1 + kappa (R-1) / (2R))`` with ``kappa`` the
    column's sample excess kurtosis (never narrowed).
    """
    from scipy import stats

    a = _check_alpha(alpha)
    x = np.asarray(samples, dtype=float)
    x2 = x.reshape(x.shape[0], -1)
    r, k = x2.shape
    if r < 3:
        raise ValueError("variance_ratio_check needs at least 3 samples")
    target = np.broadcast_to(np.asarray(expected_variance, dtype=float).ravel(), (k,))
    ratio = x2.var(axis=0, ddof=1) / target
    df = r - 1
    low0 = float(stats.chi2.ppf(a / (2 * k), df) / df)
    high0 = float(stats.chi2.isf(a / (2 * k), df) / df)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.nan_to_num(stats.kurtosis(x2, axis=0, fisher=True, bias=False), nan=0.0)
    widen = np.sqrt(1 + np.maximum(kappa, 0.0) * (r - 1) / (2 * r))
    low = 1 - (1 - low0) * widen
    high = 1 + (high0 - 1) * widen
    inside = (low <= ratio) & (ratio <= high)
    worst = int(np.argmax(np.abs(np.log(ratio))))
    ok = bool(np.all(inside))
    where = f" [{label}]" if label else ""
    message = (
        f"variance ratios in [{ratio.min():.4g}, {ratio.max():.4g}]; accepted [{low0:.4g}, {high0:.4g}] "
        f"widened by up to {widen.max():.3g} for kurtosis (R={r}, k={k}, alpha={a:g}); "
        f"column {worst}: ratio {ratio[worst]:.4g} in [{low[worst]:.4g}, {high[worst]:.4g}]{where}"
    )
    return CheckResult(
        "variance-ratio", float(ratio[worst]), float(high[worst] if ratio[worst] > 1 else low[worst]), a, ok,
        message, {"ratios": ratio, "low": low, "high": high, "replicates": r, "kurtosis": kappa},
    )


# --------------------------------------------------------------- independence
@_recorded
def independence_2x2(a: ArrayLike, b: ArrayLike, alpha: float, *, label: str = "") -> CheckResult:
    """Chi-square test (1 df) that two binary sample vectors are independent.

    Expected cell counts come from the observed margins; every cell must
    expect at least 5.
    """
    from scipy import stats

    al = _check_alpha(alpha)
    x = np.asarray(a).astype(bool).ravel()
    y = np.asarray(b).astype(bool).ravel()
    if x.shape != y.shape:
        raise ValueError("independence_2x2 needs two vectors of the same length")
    n = x.size
    table = np.array(
        [[np.sum(~x & ~y), np.sum(~x & y)], [np.sum(x & ~y), np.sum(x & y)]], dtype=float
    )
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / n
    if (expected < MIN_EXPECTED).any():
        raise ValueError(f"independence_2x2: a cell expects fewer than 5 counts (n={n})")
    statistic = float(((table - expected) ** 2 / expected).sum())
    critical = float(stats.chi2.isf(al, 1))
    where = f" [{label}]" if label else ""
    message = (
        f"chi2={statistic:.4g} vs critical {critical:.4g} (df=1, alpha={al:g}, n={n}); "
        f"table {table.astype(int).tolist()}{where}"
    )
    return CheckResult(
        "independence", statistic, critical, al, statistic <= critical, message,
        {"df": 1, "n": n, "min_expected": float(expected.min())},
    )


# ------------------------------------------------------------- discrete KS
@_recorded
def ks_gof_discrete(
    samples: ArrayLike, support: ArrayLike, probabilities: ArrayLike, alpha: float, *, label: str = ""
) -> CheckResult:
    """Kolmogorov-Smirnov test of ``samples`` against a discrete distribution.

    ``D = sup_x |F_n(x) - F(x)|`` evaluated exactly: both are right-continuous
    step functions, so the supremum is attained at a jump of either (an atom
    of ``support`` or a sample value). The critical value
    ``scipy.stats.kstwo(n).isf(alpha)`` is conservative for a discrete F
    (``P(D > c)`` is at most its continuous value). Samples off the support
    are allowed (they make ``D`` larger), so a sampler with the wrong support
    fails rather than erroring.
    """
    from scipy import stats

    a = _check_alpha(alpha)
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    n = x.size
    if n == 0:
        raise ValueError("ks_gof_discrete needs at least one sample")
    s = np.asarray(support, dtype=float).ravel()
    p = np.asarray(probabilities, dtype=float).ravel()
    if s.shape != p.shape or (p < 0).any() or not np.isclose(p.sum(), 1.0, atol=1e-9):
        raise ValueError("support and probabilities must align and probabilities sum to 1")
    order = np.argsort(s, kind="stable")
    s, cdf = s[order], np.cumsum(p[order])
    points = np.union1d(x, s)
    empirical = np.searchsorted(x, points, side="right") / n
    at = np.searchsorted(s, points, side="right") - 1
    model = np.where(at >= 0, cdf[np.maximum(at, 0)], 0.0)
    gaps = np.abs(empirical - model)
    worst = int(np.argmax(gaps))
    statistic = float(gaps[worst])
    critical = float(stats.kstwo(n).isf(a))
    where = f" [{label}]" if label else ""
    message = (
        f"discrete KS D={statistic:.4g} vs critical {critical:.4g} (n={n}, alpha={a:g}); "
        f"largest gap at x={points[worst]:.6g}{where}"
    )
    return CheckResult("ks-discrete", statistic, critical, a, statistic <= critical, message, {"n": n})
