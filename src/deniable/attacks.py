"""Fake-report attacks on frequency oracles: tooling to EVALUATE defences, not to use against anyone.

The data-poisoning attacks of Cao, Jia & Gong ("Data Poisoning Attacks to
Local Differential Privacy Protocols", USENIX Security 2021), for the tests,
the benchmarks and the documentation of deniable's manipulation bounds,
detection tests and recoveries. An attacker controls ``m`` fake users who
send well-formed reports; the collector cannot tell them from noise. Each
function returns ``m`` reports in the mechanism's own format, to be
concatenated with genuine ones (:func:`numpy.concatenate`) and estimated as
usual:

* :func:`maximal_gain` (MGA, output manipulation): each fake report is
  chosen to support as many target items as one report can; it achieves
  :meth:`deniable.FrequencyOracle.manipulation`'s ``target_gain``.
* :func:`random_item` (RIA, input manipulation): each fake user takes a
  uniformly drawn target as its true value and runs the honest randomizer.
* :func:`random_value` (RPA): each fake report is drawn uniformly from the
  report space, ignoring the targets.

The **overall gain** of an attack on the targets ``T`` is the rise of their
summed estimate, ``sum_{t in T} (f_t after - f_t before)``
(:func:`overall_gain`); :func:`expected_gain` gives Cao et al.'s closed
forms, ``beta (G - f_T)`` with ``beta = m / (n + m)`` and ``G`` per attack:

==========  ===================================  =====================  =========================
attack      GRR                                  OUE / SUE              OLH / BLH (``g`` buckets)
==========  ===================================  =====================  =========================
MGA         ``(1 - r q)/(p - q)``                ``r (1 - q)/(p - q)``  ``r (1 - 1/g)/(p - 1/g)``
RIA         1                                    1                      1
RPA         ``r / k``                            ``r (1/2 - q)/(p-q)``  0
==========  ===================================  =====================  =========================

(MGA's column assumes the ``r`` targets fit one report, which
``manipulation`` checks exactly.) The mechanisms supported: GRR, BinaryRR,
SUE, OUE, BLH, OLH, SubsetSelection and HadamardResponse, for every attack;
the longitudinal (memoizing) ones too: L-GRR and L-OSUE (their reports are
GRR's and unary encoding's), DBitFlip (a fake report samples the targets'
buckets with bit 1), and RAPPOR (fakes spread evenly over the cohorts, each
setting the Bloom bits that raise the targets' least-squares estimate:
:mod:`deniable.mechanisms._rappor_manipulation`). A fake of a memoizing
mechanism needs no memoized state: the server cannot tell one report from a
device's permanent response. What a recovery (:func:`deniable.recover`)
needs of an attack is :func:`fake_contribution`, one fake report's expected
contribution to each estimate in the mechanism's own estimator, for every
mechanism above; :func:`fake_support` gives the pure oracles' support rates
it derives from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._manipulation import target_positions
from deniable.mechanisms import GRR, RAPPOR, BinaryRR, DBitFlip, HadamardResponse, SubsetSelection
from deniable.mechanisms._hashing import REPORT_DTYPE, LocalHashing
from deniable.mechanisms._rappor_manipulation import best_bits, contributions, uniform_gain
from deniable.mechanisms._subset import _FLOYD_MAX, _floyd, _smallest_keys
from deniable.mechanisms._unary import UnaryEncoding
from deniable.mechanisms._walsh import parity

__all__ = [
    "maximal_gain", "random_item", "random_value", "overall_gain", "expected_gain", "fake_support",
    "fake_contribution", "ATTACKS",
]

ATTACKS = ("maximal-gain", "random-item", "random-value")
"""The attacks' names, as :func:`expected_gain` takes them."""


def _count(m: object) -> int:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
        raise ValueError(f"m (the number of fake reports) must be a non-negative int; got {m!r}")
    return int(m)


def _unsupported(mechanism: Any, attack: str) -> TypeError:
    return TypeError(f"the {attack} attack is not implemented for {type(mechanism).__name__}")


def _pick(population: int, size: int, count: int, source: Any) -> NDArray[np.int64]:
    """``count`` rows of uniform ``size``-subsets of ``[population]`` (subset selection's exact samplers)."""
    if size == 0 or count == 0:
        return np.zeros((count, size), dtype=np.int64)
    draw = _floyd if size <= _FLOYD_MAX else _smallest_keys
    return draw(count, population, size, source)


def maximal_gain(
    mechanism: Any, targets: Any, m: int, *, rng: randomness.RNGLike = None, pad: bool = True
) -> NDArray[Any]:
    """``m`` fake reports of the maximal-gain attack on ``targets`` (output manipulation).

    * GRR / BinaryRR: a uniformly drawn target (one report supports one item).
    * SUE / OUE: every target bit set; with ``pad=True`` (Cao et al.'s choice,
      to pass a count-of-ones check) also ``round(p + (k-1) q) - r`` other
      bits, drawn uniformly, so the report has the expected number of ones.
    * BLH / OLH: a hash of the family under which the most targets share one
      bucket (drawn among all such hashes, with a uniform offset), and that bucket.
    * SubsetSelection: the targets (a uniform ``omega`` of them when there are
      more), completed with uniformly drawn other categories.
    * HadamardResponse: an output supporting the most targets, drawn among all such.
    * DBitFlip: the targets' buckets (a uniform ``d`` of them when there are
      more, completed with uniformly drawn others) with bit 1 on the targets.
    * RAPPOR: fake ``i`` in cohort ``(o + i) mod num_cohorts`` (``o``
      uniform), with the Bloom bits of positive weight in the targets'
      least-squares estimate for that cohort.
    """
    count = _count(m)
    positions = target_positions(mechanism, targets)
    source = randomness.resolve(rng)
    r, k = positions.size, mechanism.k
    if isinstance(mechanism, (GRR, BinaryRR)):
        chosen = positions[randomness.uniform_below(r, count, source).astype(np.int64)]
        if isinstance(mechanism, BinaryRR):
            return chosen == 1
        return mechanism.domain_obj.decode(chosen)
    if isinstance(mechanism, UnaryEncoding):
        bits = np.zeros((count, k), dtype=bool)
        bits[:, positions] = True
        if pad:
            extra = max(0, round(float(mechanism.p + (k - 1) * mechanism.q)) - r)
            others = np.setdiff1d(np.arange(k), positions)
            extra = min(extra, others.size)
            rows = np.repeat(np.arange(count), extra)
            bits[rows, others[_pick(others.size, extra, count, source).ravel()]] = True
        return np.packbits(bits, axis=1)
    if isinstance(mechanism, LocalHashing):
        matrices, _ = mechanism.colliding_hashes(positions)
        seeds = matrices[randomness.uniform_below(matrices.size, count, source).astype(np.int64)]
        offsets = randomness.uniform_below(mechanism.g, count, source)
        seeds = seeds | (offsets << np.uint64(mechanism.hash_bits + mechanism.m - 1))
        out = np.empty(count, dtype=REPORT_DTYPE)
        out["seed"], out["value"] = seeds, _shared_bucket(mechanism, seeds, positions)
        return out
    if isinstance(mechanism, SubsetSelection):
        out = np.empty(count, dtype=mechanism.dtype)
        out["subset"] = _subsets_with(positions, k, mechanism.omega, count, source)
        return out
    if isinstance(mechanism, HadamardResponse):
        y = np.arange(mechanism.K, dtype=np.uint64)[:, None]
        supported = (parity(y & (positions.astype(np.uint64)[None, :] + np.uint64(1))) == 0).sum(axis=1)
        best = np.flatnonzero(supported == supported.max())
        return best[randomness.uniform_below(best.size, count, source).astype(np.int64)].astype(np.int64)
    if isinstance(mechanism, DBitFlip):
        buckets = _subsets_with(positions, k, mechanism.d, count, source)
        return mechanism._records(buckets, np.isin(buckets, positions).astype(np.uint8))
    if isinstance(mechanism, RAPPOR):
        offset = int(randomness.uniform_below(mechanism.num_cohorts, 1, source)[0])
        cohorts = (np.arange(count) + offset) % mechanism.num_cohorts
        bits = _words(mechanism, best_bits(mechanism, positions)[cohorts])
        return mechanism._reports(cohorts.astype(np.uint64), bits)
    raise _unsupported(mechanism, "maximal-gain")


def _subsets_with(positions: NDArray[np.int64], k: int, size: int, count: int, source: Any) -> NDArray[np.int64]:
    """``count`` sorted ``size``-subsets of ``[k]``: ``size`` uniform targets at ``positions``, or all of them
    completed with uniformly drawn others."""
    r = positions.size
    if r >= size:
        return np.sort(positions[_pick(r, size, count, source)], axis=1)
    others = np.setdiff1d(np.arange(k), positions)
    fill = others[_pick(others.size, size - r, count, source)]
    return np.sort(np.concatenate([np.broadcast_to(positions, (count, r)), fill], axis=1), axis=1)


def _words(mechanism: Any, bits: NDArray[np.bool_]) -> NDArray[np.uint64]:
    """``(n, num_bits)`` booleans as RAPPOR's ``(n, words)`` 64-bit words, least significant first."""
    padded = np.zeros((bits.shape[0], 64 * mechanism._words), dtype=np.uint64)
    padded[:, : bits.shape[1]] = bits
    shifts = np.arange(64, dtype=np.uint64)
    return (padded.reshape(bits.shape[0], mechanism._words, 64) << shifts).sum(axis=2, dtype=np.uint64)


def _shared_bucket(mechanism: Any, seeds: NDArray[np.uint64], positions: NDArray[np.int64]) -> NDArray[np.uint64]:
    """Per hash seed, the bucket holding the most of the categories at ``positions``."""
    buckets = np.stack([mechanism.hash(seeds, int(t)) for t in positions], axis=1).astype(np.int64)
    tallies = np.zeros((seeds.size, mechanism.g), dtype=np.int64)
    np.add.at(tallies, (np.repeat(np.arange(seeds.size), positions.size), buckets.ravel()), 1)
    return tallies.argmax(axis=1).astype(np.uint64)


def random_item(mechanism: Any, targets: Any, m: int, *, rng: randomness.RNGLike = None) -> NDArray[Any]:
    """``m`` fake reports of the random-item attack: uniformly drawn targets, honestly randomized (input
    manipulation; any frequency oracle)."""
    count = _count(m)
    positions = target_positions(mechanism, targets)
    source = randomness.resolve(rng)
    values = mechanism.domain_obj.decode(positions[randomness.uniform_below(positions.size, count, source)
                                                   .astype(np.int64)])
    return np.asarray(mechanism.privatize_many(values, rng=source))


def random_value(mechanism: Any, m: int, *, rng: randomness.RNGLike = None) -> NDArray[Any]:
    """``m`` fake reports drawn uniformly from the mechanism's report space (the random perturbed-value attack)."""
    count = _count(m)
    source = randomness.resolve(rng)
    k = mechanism.k
    if isinstance(mechanism, BinaryRR):
        return randomness.uniform_below(2, count, source) == 1
    if isinstance(mechanism, GRR):
        return mechanism.domain_obj.decode(randomness.uniform_below(k, count, source).astype(np.int64))
    if isinstance(mechanism, UnaryEncoding):
        bits = randomness.uniform_below(2, count * k, source).reshape(count, k).astype(bool)
        return np.packbits(bits, axis=1)
    if isinstance(mechanism, LocalHashing):
        out = np.empty(count, dtype=REPORT_DTYPE)
        out["seed"] = randomness.uniform_below(1 << mechanism.seed_bits, count, source)
        out["value"] = randomness.uniform_below(mechanism.g, count, source)
        return out
    if isinstance(mechanism, HadamardResponse):
        return randomness.uniform_below(mechanism.K, count, source).astype(np.int64)
    if isinstance(mechanism, SubsetSelection):
        out = np.empty(count, dtype=mechanism.dtype)
        out["subset"] = np.sort(_pick(k, mechanism.omega, count, source), axis=1)
        return out
    if isinstance(mechanism, DBitFlip):
        bits = randomness.uniform_below(2, count * mechanism.d, source).reshape(count, mechanism.d)
        return mechanism._records(np.sort(_pick(k, mechanism.d, count, source), axis=1), bits.astype(np.uint8))
    if isinstance(mechanism, RAPPOR):
        cohorts = randomness.uniform_below(mechanism.num_cohorts, count, source)
        words = np.frombuffer(source.random_bytes(8 * count * mechanism._words), dtype=np.uint64)
        return mechanism._reports(cohorts, words.reshape(count, mechanism._words) & mechanism._keep)
    raise _unsupported(mechanism, "random-value")


def overall_gain(before: Any, after: Any, targets: Any) -> float:
    """``sum_{t in T} (f_t after - f_t before)`` of two :class:`deniable.Estimate` over the same categories."""
    if tuple(before.domain) != tuple(after.domain):
        raise ValueError("the two estimates must be over the same categories")
    index = {v: i for i, v in enumerate(before.domain)}
    try:
        rows = [index[t] for t in targets]
    except KeyError as exc:
        raise ValueError(f"target {exc.args[0]!r} is not a category") from None
    return float(np.sum(after.frequencies[rows] - before.frequencies[rows]))


def expected_gain(
    mechanism: Any, attack: str, targets: Any, fake_fraction: float, target_share: float = 0.0
) -> float:
    """Cao et al.'s expected overall gain, ``beta (G - f_T)``, of ``attack`` on ``targets``.

    ``fake_fraction`` is ``beta = m / (n + m)``, ``target_share`` the
    targets' summed genuine share ``f_T``. ``G`` is the expected summed
    debiased contribution of one fake report to the targets: the
    mechanism's ``target_gain`` for ``"maximal-gain"``, 1 for
    ``"random-item"``, and ``sum_t (s_t - q*)/(p* - q*)`` with ``s_t`` the
    uniform report's support rate of ``t`` for ``"random-value"``.
    """
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {ATTACKS}; got {attack!r}")
    sensitivity = mechanism.manipulation(targets)
    if attack == "maximal-gain":
        return sensitivity.gain(fake_fraction, target_share)
    if not 0 <= fake_fraction <= 1:
        raise ValueError(f"fake_fraction must be in [0, 1]; got {fake_fraction!r}")
    per_report = 1.0 if attack == "random-item" else _uniform_gain(mechanism, target_positions(mechanism, targets))
    return float(fake_fraction * (per_report - target_share))


def _uniform_gain(mechanism: Any, positions: NDArray[np.int64]) -> float:
    """The targets' summed debiased contribution of a report drawn uniformly from the report space."""
    if isinstance(mechanism, DBitFlip):  # each target sampled w.p. d/k, its bit 1 w.p. 1/2: 1/2 each
        return positions.size / 2
    if isinstance(mechanism, RAPPOR):
        return uniform_gain(mechanism, positions)
    p, q = (float(x[0]) for x in mechanism.support_rates())
    return positions.size * (_uniform_support_rate(mechanism) - q) / (p - q)


def _uniform_support_rate(mechanism: Any) -> float:
    """``P(v in S(y))`` for a report ``y`` drawn uniformly from the report space."""
    if isinstance(mechanism, UnaryEncoding):
        return 0.5
    if isinstance(mechanism, LocalHashing):
        return 1.0 / mechanism.g
    if isinstance(mechanism, HadamardResponse):
        return 0.5
    if isinstance(mechanism, (GRR, BinaryRR)):
        return 1.0 / mechanism.k
    if isinstance(mechanism, SubsetSelection):
        return mechanism.omega / mechanism.k
    raise _unsupported(mechanism, "random-value")


def fake_support(mechanism: Any, attack: str, targets: Any, *, pad: bool = True) -> NDArray[np.float64]:
    """``s_v``: the probability that one fake report of ``attack`` supports each category.

    What a recovery needs to know of the attack (:func:`deniable.recover`):
    the fakes' debiased contribution to category ``v`` is
    ``(s_v - q*)/(p* - q*)``. Maximal gain: from the reports
    :func:`maximal_gain` makes (``pad`` as there; for local hashing, the
    share of the hashes it draws from that put ``v`` in the chosen bucket);
    random item: ``q* + (p* - q*)/r`` for each target and
    ``q*`` elsewhere; random value: the uniform report's rate.
    """
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {ATTACKS}; got {attack!r}")
    positions = target_positions(mechanism, targets)
    r, k = positions.size, mechanism.k
    p, q = mechanism.support_rates()
    inside = np.zeros(k, dtype=bool)
    inside[positions] = True
    if attack == "random-item":
        return np.where(inside, q + (p - q) / r, q)
    if attack == "random-value":
        return np.full(k, _uniform_support_rate(mechanism))
    if isinstance(mechanism, (GRR, BinaryRR)):
        return np.where(inside, 1.0 / r, 0.0)
    if isinstance(mechanism, UnaryEncoding):
        extra = max(0, round(float(mechanism.p + (k - 1) * mechanism.q)) - r) if pad else 0
        return np.where(inside, 1.0, min(extra, k - r) / max(k - r, 1))
    if isinstance(mechanism, LocalHashing):
        matrices, _ = mechanism.colliding_hashes(positions)
        chosen = _shared_bucket(mechanism, matrices, positions)  # the offset shifts every bucket alike
        return np.array([np.mean(mechanism.hash(matrices, v) == chosen) for v in range(k)])
    if isinstance(mechanism, SubsetSelection):
        w = mechanism.omega
        return np.where(inside, min(1.0, w / r), max(0, w - r) / max(k - r, 1))
    if isinstance(mechanism, HadamardResponse):
        y = np.arange(mechanism.K, dtype=np.uint64)[:, None]
        rows = np.arange(k, dtype=np.uint64)[None, :] + np.uint64(1)
        support = parity(y & rows) == 0
        counts = support[:, positions].sum(axis=1)
        return np.asarray(support[counts == counts.max()].mean(axis=0), dtype=float)
    raise _unsupported(mechanism, "maximal-gain")


def fake_contribution(mechanism: Any, attack: str, targets: Any, *, pad: bool = True) -> NDArray[np.float64]:
    r"""``z_v``: one fake report's expected contribution to each category's estimate, in the mechanism's own
    estimator.

    With a fraction ``beta`` of fakes the unbiased estimate is, in
    expectation, ``(1 - beta) f + beta z``; :func:`deniable.recover` inverts
    it. Per mechanism (``a / b`` the odds of a bit, ``d`` the sampled buckets):

    * pure oracles (GRR, unary, local hashing, subset selection, Hadamard):
      ``(s_v - q*)/(p* - q*)`` with ``s = fake_support(...)``;
    * DBitFlip, whose estimate averages ``(k/d) [v sampled] (bit (a+b) - b)/(a-b)``:
      ``(k/d) ((a+b) s_v - b t_v)/(a-b)`` with ``t_v`` the probability that a
      fake samples ``v`` and ``s_v`` that it does so with bit 1 (maximal gain:
      each target sampled w.p. ``min(1, d/r)`` with bit 1 and, when ``r < d``,
      each other bucket w.p. ``(d-r)/(k-r)`` with bit 0; random value:
      ``t_v = d/k``, ``s_v = d/(2k)``, so ``z_v = 1/2``);
    * RAPPOR, whose least-squares decode is (with equal cohorts) the mean of
      ``z_v(c, s) = sum_i w_{c,i,v} (s_i - p*)``
      (:mod:`deniable.mechanisms._rappor_manipulation`): the mean over the
      cohorts of that sum for the bits a fake sets (maximal gain, its fakes
      spread evenly over the cohorts) or ``1/2`` each (random value).

    Random item (a fake user with a uniformly drawn target as its value, run
    through the honest randomizer) gives ``1/r`` on each target and 0
    elsewhere for every mechanism: the estimators are unbiased.

    Parameters
    ----------
    mechanism : FrequencyOracle
        The mechanism the fakes report to.
    attack : str
        One of :data:`ATTACKS`.
    targets : sequence
        The categories the attack promotes.
    pad : bool, default True
        As in :func:`maximal_gain` (unary encodings).

    Returns
    -------
    numpy.ndarray
        One float per category.

    Raises
    ------
    ValueError
        An unknown attack.
    TypeError
        A mechanism the attacks do not cover.

    Examples
    --------
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> m = dn.DBitFlip(8, d=2, epsilon=2.0)
    >>> z = attacks.fake_contribution(m, "maximal-gain", [6, 7])
    >>> [round(float(x), 3) for x in z[5:]]  # (k/d) e/(e - 1) on each target, e = e^(eps/2)
    [0.0, 6.328, 6.328]
    >>> attacks.fake_contribution(m, "random-value", [6, 7])[:3].tolist()
    [0.5, 0.5, 0.5]
    """
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {ATTACKS}; got {attack!r}")
    positions = target_positions(mechanism, targets)
    r, k = positions.size, mechanism.k
    if attack == "random-item":
        return np.bincount(positions, minlength=k) / r
    if isinstance(mechanism, DBitFlip):
        return _dbitflip_contribution(mechanism, attack, positions)
    if isinstance(mechanism, RAPPOR):
        weights = contributions(mechanism)  # (cohorts, bits, k)
        if attack == "random-value":
            bits = np.full(weights.shape[:2], 0.5)
        else:
            bits = best_bits(mechanism, positions).astype(float)
        z = np.einsum("ci,civ->v", bits - float(mechanism.p_star), weights) / mechanism.num_cohorts
        return np.asarray(z, dtype=float)
    p, q = mechanism.support_rates()
    return np.asarray((fake_support(mechanism, attack, targets, pad=pad) - q) / (p - q), dtype=float)


def _dbitflip_contribution(mechanism: Any, attack: str, positions: NDArray[np.int64]) -> NDArray[np.float64]:
    """DBitFlip's ``(k/d) ((a+b) s - b t)/(a-b)`` for the maximal-gain and random-value fakes."""
    k, d, r = mechanism.k, mechanism.d, positions.size
    a, b = float(mechanism._ra), float(mechanism._rb)
    inside = np.isin(np.arange(k), positions)
    if attack == "random-value":
        sampled, ones = np.full(k, d / k), np.full(k, d / (2 * k))
    else:
        sampled = np.where(inside, min(1.0, d / r), max(0, d - r) / max(k - r, 1))
        ones = np.where(inside, sampled, 0.0)
    return np.asarray((k / d) * ((a + b) * ones - b * sampled) / (a - b), dtype=float)
