"""Frequent items (SVIM) and itemsets (SVSM): discovery, unbiased shares, delta-method standard errors.

* Discovery: 100,000 users, 100 items, sets of 1-8 independent draws (sizes 1-8) where the 10 frequent
  items hold 85% of the weight (Zipf(0.5) among them) and the 90 others share the rest, epsilon 4,
  ``top_k = 10``: SVIM's top 10 are exactly the true top 10 (recall = precision = 1). The test checks
  its own false-failure bound first: in phase 1 (ell = 1) and in phase 3 (at every ``L``), the 10th
  item's expected estimate exceeds a tail item's by more than 6.5 standard deviations of their
  difference (sd_a + sd_b, the oracle's variance formula at the sets' sampling rates; measured: 15.3
  in phase 1, 11.0 to 21.1 in phase 3 for L = 8 to 1), so the
  union bound over the 10 x 90 pairs of each phase gives a false failure below
  ``2 * 900 * Phi(-6.5) = 7e-8``.
* Unbiased, real reports (SVIM and SVSM with ``ell = M``, so no set is cut and ``u = 1``): every
  candidate's share (items; itemsets of SVSM, its planted pair and triple included) is within
  ``z(1e-6 / candidates)`` SEs of its exact population share (:func:`drawn_sets`). Power: the
  estimate without SetValued's ``ell`` factor is off by hundreds of SEs.
* The size correction and its SE, where its assumption holds exactly (each set a uniformly random
  subset of 8 symmetric items, so a candidate is equally likely to be any member): R = 2000
  simulated surveys of phases 2 (1,000 users) and 3 (20,000) with aggregates drawn from their exact
  laws, at ``L = 2``: ``f^ / u^`` unbiased (Student t), variance = the mean delta-method ``SE^2``
  (variance-ratio band), 95% intervals cover (binomial band). Power: the uncorrected ``f^`` (``u`` =
  0.83: off by 4.4 SEs per survey, about 200 SEs of the mean) fails; SEs without the ``Var(u^)`` term
  are 20% small (variance ratio about 1.5) and fail the variance check.

Alpha: each test function spends at most 1e-6 (Bonferroni over its checks).
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._aggregates import SupportCounts
from deniable._intervals import z_for
from deniable.heavy._quality import drawn_sets

pytestmark = pytest.mark.stat

ALPHA = 1e-6


def _sd(m: dn.SetValued, rate: np.ndarray, n: int) -> np.ndarray:
    """SD of ``ell pi^`` at the exact sampling rates ``rate`` (the oracle's formula)."""
    p, q = (float(r[0]) for r in m.mechanism.support_rates())
    lam = q + (p - q) * rate
    return np.asarray(m.ell * np.sqrt(lam * (1 - lam) / n) / (p - q))


def test_svim_finds_exactly_the_top_items_where_the_margin_allows() -> None:
    head = 1 / np.arange(1, 11) ** 0.5
    weights = np.concatenate([0.85 * head / head.sum(), np.full(90, 0.15 / 90)])
    rng = np.random.default_rng(11)
    n, top = 100_000, 10
    sets, share = drawn_sets(n, rng, weights, max_draws=8)
    fi = dn.FrequentItems(100, epsilon=4.0, top_k=top, max_items=8)
    # the design's margins: phase 1 (ell = 1) and phase 3 over the true top 10 and 10 tail items, any L
    sizes = np.array([len(v) for v in sets])
    member = np.zeros((n, 100), dtype=bool)
    member[np.repeat(np.arange(n), sizes), np.concatenate(sets)] = True
    n1, _, n3 = (round(s * n) for s in (0.4, 0.1, 0.5))
    rate = (member / sizes[:, None]).mean(axis=0)
    sd = _sd(fi.prune, rate, n1)
    tenth, tail = 9, 10 + int(np.argmax(rate[10:]))
    assert (rate[tenth] - rate[tail]) / (sd[tenth] + sd[tail]) > 6.5
    cand = np.r_[0:10, 10 + np.argsort(-rate[10:])[:10]]
    held = member[:, cand].sum(axis=1)
    for ell in range(1, 9):
        m = fi.count_mechanism(tuple(cand.tolist()), ell)
        rate3 = (member[:, cand] / np.maximum(held, ell)[:, None]).mean(axis=0)
        sd3 = _sd(m, rate3, n3)
        gap = ell * (rate3[:10].min() - rate3[10:].max()) / (sd3[:10].max() + sd3[10:].max())
        assert gap > 6.5, (ell, gap)
    found = fi.run(sets, rng=rng)
    truth = {int(i) for i in np.argsort(-np.array([share([i]) for i in range(100)]))[:top]}
    assert truth == set(range(10))
    assert {v for v, _, _ in found.top()} == truth


def test_svim_shares_unbiased_within_their_standard_errors() -> None:
    rng = np.random.default_rng(12)
    weights = 1 / np.arange(1, 31) ** 1.1
    sets, share = drawn_sets(60_000, rng, weights / weights.sum(), max_draws=5, planted=(2, 4), planted_share=0.2)
    fi = dn.FrequentItems(30, epsilon=2.0, top_k=5, max_items=7, ell=7)
    found = fi.run(sets, rng=rng)
    assert found.ell == 7
    truth = np.array([share([v]) for v in found.values])
    r = testing.estimate_check(found.frequencies, truth, found.std_errors, ALPHA, label="SVIM, ell = M")
    assert r.passed, r.message
    assert not testing.estimate_check(found.frequencies / found.ell, truth, found.std_errors, ALPHA).passed


def test_svsm_itemset_shares_unbiased_within_their_standard_errors() -> None:
    rng = np.random.default_rng(13)
    weights = 1 / np.arange(1, 21) ** 1.1
    sets, share = drawn_sets(80_000, rng, weights / weights.sum(), max_draws=4, planted=(3, 6, 9), planted_share=0.3)
    fs = dn.FrequentItemsets(20, epsilon=3.0, top_k=8, max_items=7, ell=8)
    found = fs.run(sets, rng=rng)
    pairs = [i for i, v in enumerate(found.values) if len(v) >= 2]
    values = [found.values[i] for i in pairs]
    assert len(values) == 8  # top_k candidate itemsets, each estimated
    truth = np.array([share(v) for v in values])
    r = testing.estimate_check(found.frequencies[pairs], truth, found.std_errors[pairs], ALPHA, label="SVSM sets")
    assert r.passed, r.message
    assert not testing.estimate_check(
        found.frequencies[pairs] / found.ell, truth, found.std_errors[pairs], ALPHA
    ).passed


def _symmetric_laws(k: int, cands: int, sizes: dict[int, float], ell: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A set is a uniformly random subset of the ``k`` items of size ``i`` (share ``sizes[i]``): the law of
    ``|V & S|`` (``S`` the first ``cands`` items), the padded draw's law over the candidates and dummies,
    and each candidate's share."""
    from scipy import stats

    held = np.zeros(cands + 1)
    for i, s in sizes.items():
        held += s * stats.hypergeom(k, cands, i).pmf(np.arange(cands + 1))
    draw = np.zeros(cands + ell)
    for j in range(cands + 1):
        bound = max(j, ell)
        draw[:cands] += held[j] * (j / cands) / bound  # a candidate is in the set w.p. j / cands, drawn 1 / bound
        draw[cands : cands + bound - j] += held[j] / bound
    return held, draw, sum(s * i / k for i, s in sizes.items())


def test_size_correction_unbiased_with_delta_method_errors() -> None:
    """Alpha 1e-6 over 3 checks; see the module docstring for the power."""
    k, ell, n2, n3, reps = 8, 2, 1_000, 20_000, 2000
    sizes = {1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2, 6: 0.2}
    fi = dn.FrequentItems(k, epsilon=2.0, top_k=2, max_items=6, ell=ell, oracle="grr")
    cands = (0, 1, 2, 3)
    held, draw, f = _symmetric_laws(k, len(cands), sizes, ell)
    size_mech, count_mech = fi.size_mechanism(cands), fi.count_mechanism(cands, ell)
    rng = np.random.default_rng(14)
    est, se, raw, plain = [], [], [], []
    for _ in range(reps):
        size_counts = size_mech.simulate_support_counts(rng.multinomial(n2, held), rng)
        count_counts = count_mech.mechanism.simulate_support_counts(rng.multinomial(n3, draw), rng)
        size_stat = SupportCounts(size_mech.fingerprint, size_counts, n2)
        count_stat = SupportCounts(count_mech.fingerprint, count_counts, n3)
        got = fi.result(cands, size_stat, count_stat, ell, n2 + n3)
        order = np.argsort([cands.index(v) for v in got.values])
        est.append(got.frequencies[order])
        se.append(got.std_errors[order])
        counted = count_mech.estimate_from(count_stat)
        raw.append(counted.frequencies)
        plain.append(counted.std_errors * est[-1] / counted.frequencies)  # s_x / u^: no Var(u^) term
    errors, se_arr = np.array(est) - f, np.array(se)
    a = ALPHA / 3
    r = testing.mean_check(errors, 0.0, a, label="f^ / u^ unbiased")
    assert r.passed, r.message
    assert not testing.mean_check(np.array(raw) - f, 0.0, a).passed
    typical = np.sqrt((se_arr**2).mean(axis=0))
    r = testing.variance_ratio_check(errors / typical, 1.0, a, label="variance = delta method")
    assert r.passed, r.message
    assert not testing.variance_ratio_check(errors / np.sqrt((np.array(plain) ** 2).mean(axis=0)), 1.0, a).passed
    hits = np.abs(errors) <= z_for(0.05) * se_arr
    for j in range(len(cands)):
        r = testing.coverage_check(int(hits[:, j].sum()), reps, 0.95, a / len(cands), label=f"candidate {j}")
        assert r.passed, r.message
