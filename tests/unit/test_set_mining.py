"""Frequent items (SVIM) and itemsets (SVSM) of set-valued answers: the phases, privacy, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import deniable as dn
from deniable.errors import CategoryError
from deniable.heavy._itemsets import best_products
from deniable.heavy._quality import drawn_sets

ITEMS = ["mail", "maps", "chat", "news", "game"]


def _worst_log_ratio(matrix: np.ndarray) -> float:
    assert np.allclose(matrix.sum(axis=1), 1.0)
    return float(np.max(np.log(matrix.max(axis=0) / matrix.min(axis=0))))


@pytest.mark.deterministic
@pytest.mark.parametrize("oracle", ["grr", "oue"])
def test_every_phase_is_epsilon_ldp_exactly(oracle: str) -> None:
    """Each phase's output law over every possible true value: the largest log-ratio is the phase's
    stated epsilon (to 1e-9, never above it), and that spends the epsilon asked for (the counting
    phases' oracles run above it where sampling amplifies); each user is in one group, so the
    protocol's epsilon is the largest phase's (each phase's realised epsilon is at most the one asked)."""
    eps = 1.5
    fi = dn.FrequentItems(ITEMS, epsilon=eps, top_k=2, max_items=3, oracle=oracle)
    every = [c for size in range(4) for c in itertools.combinations(ITEMS, size)]
    prune = _worst_log_ratio(fi.prune.transition_matrix(every))
    assert prune <= fi.prune.epsilon + 1e-12 and prune == pytest.approx(fi.prune.epsilon, abs=1e-9)
    candidates = ("mail", "chat", "news", "maps")
    _, sizes = fi.size_mechanism(candidates).transition_matrix()
    assert abs(_worst_log_ratio(sizes) - fi.size_mechanism(candidates).epsilon) < 1e-9  # GRR over the sizes 0..3
    for ell in (1, 2, 3):
        counts = fi.count_mechanism(candidates, ell)
        held = [c for size in range(4) for c in itertools.combinations(range(4), size)]
        worst = _worst_log_ratio(counts.transition_matrix(held))
        assert worst <= counts.epsilon + 1e-12 and worst == pytest.approx(counts.epsilon, abs=1e-9)
        if oracle == "grr" and ell > 1:
            assert counts.oracle_epsilon > eps + 0.3  # the amplified budget
    phases = [fi.prune, fi.size_mechanism(candidates), *(fi.count_mechanism(candidates, e) for e in (1, 2, 3))]
    assert fi.epsilon == eps and all(eps - 1e-8 < m.epsilon <= eps for m in phases)  # realised: never above
    fs = dn.FrequentItemsets(ITEMS, epsilon=eps, top_k=3, max_items=3, oracle=oracle)
    sets3 = (("mail", "maps"), ("mail", "chat"), ("maps", "chat"))
    _, sizes = fs.size_mechanism(sets3).transition_matrix()
    assert abs(_worst_log_ratio(sizes) - eps) < 1e-9
    counts = fs.count_mechanism(sets3, 2)
    held = [c for size in range(4) for c in itertools.combinations(range(3), size)]
    worst = _worst_log_ratio(counts.transition_matrix(held))
    assert worst <= counts.epsilon + 1e-12 and worst == pytest.approx(counts.epsilon, abs=1e-9)
    assert fs.epsilon == eps and fs.size_mechanism(sets3).epsilon <= eps and eps - 1e-8 < counts.epsilon <= eps


def test_groups_are_disjoint_random_and_sized_by_shares() -> None:
    fi = dn.FrequentItems(ITEMS, epsilon=1.0, top_k=1, max_items=2)
    groups = fi.assign(1000, np.random.default_rng(0))
    assert np.bincount(groups).tolist() == [400, 100, 500]
    assert not np.array_equal(groups, np.sort(groups))  # shuffled, not by position
    fs = dn.FrequentItemsets(ITEMS, epsilon=1.0, top_k=2, max_items=2)
    assert np.bincount(fs.assign(1000, np.random.default_rng(0))).tolist() == [160, 40, 200, 120, 480]
    assert fi.assign(10).shape == (10,)  # secure randomness by default


def test_phases_by_hand_match_run() -> None:
    """A deployment's calls (assign, each phase's mechanism and aggregate, result) give what run gives."""
    sets = [["mail", "maps"] if i % 3 else ["chat"] for i in range(3000)]
    fi = dn.FrequentItems(ITEMS, epsilon=3.0, top_k=2, max_items=3)
    expected = fi.run(sets, rng=np.random.default_rng(4))
    source = np.random.default_rng(4)
    groups = fi.assign(len(sets), source)
    part = [[sets[i] for i in np.flatnonzero(groups == g)] for g in range(3)]
    cands = fi.candidates(fi.prune.aggregate(fi.prune.privatize_many(part[0], source)))
    size_mech = fi.size_mechanism(cands)
    size_stat = size_mech.aggregate(size_mech.privatize_many([len(h) for h in fi.held(cands, part[1])], source))
    ell = fi.length(cands, size_stat)
    counts = fi.count_mechanism(cands, ell)
    count_stat = counts.aggregate(counts.privatize_many(fi.held(cands, part[2]), source))
    got = fi.result(cands, size_stat, count_stat, ell, len(sets))
    assert got.values == expected.values and got.ell == expected.ell
    np.testing.assert_allclose(got.frequencies, expected.frequencies)
    np.testing.assert_allclose(got.std_errors, expected.std_errors)
    assert sorted(v for v, _, _ in got.top()) == ["mail", "maps"]
    assert fi.held(("chat", "mail"), [["mail", "maps", "chat"], []]) == [[1, 0], []]


def test_result_table() -> None:
    sets = [[0, 1] if i % 2 else [2] for i in range(2000)]
    found = dn.FrequentItems(6, epsilon=3.0, top_k=2, max_items=2).run(sets, rng=np.random.default_rng(1))
    frame = found.to_frame()
    assert list(frame.columns) == ["value", "estimate", "std_error", "ci_low", "ci_high", "top"]
    assert frame["top"].sum() == 2 and len(frame) == 4  # 2 top_k candidates, the first 2 the answer
    assert np.all(np.diff(found.frequencies) <= 0)
    low, high = found.confidence_interval(0.9)
    assert np.all(low < found.frequencies) and np.all(found.frequencies < high)
    assert found.to_dict()["top_k"] == 2 and found.to_dict()["values"] == list(found.values)


def test_best_products_is_the_top_of_every_subset() -> None:
    values = np.random.default_rng(3).uniform(0.05, 0.9, size=7)
    got = best_products(values, 12)
    subsets = [c for size in range(2, 8) for c in itertools.combinations(range(7), size)]
    truth = sorted(subsets, key=lambda c: -float(np.prod(values[list(c)])))[:12]
    assert got == truth
    assert best_products([0.5], 3) == [] and len(best_products([0.5, 0.4, 0.3], 10)) == 4


def test_itemset_candidates_and_held() -> None:
    fs = dn.FrequentItemsets(ITEMS, epsilon=4.0, top_k=3, max_items=4)
    found = dn.FrequentSets(
        "SVIM", 4.0, ("chat", "mail", "maps"), np.array([0.6, 0.5, 0.1]), np.array([0.01, 0.01, 0.01]), 3, 100, 2
    )
    cands = fs.candidates(found)  # v = 0.9 f / 0.6: chat 0.9, mail 0.75, maps 0.15; pairs before the triple
    assert cands == (("mail", "chat"), ("maps", "chat"), ("mail", "maps"))
    held = fs.held(cands, [["chat", "mail", "maps"], ["mail"], ["game", "chat", "mail"]])
    assert held == [[0, 1, 2], [], [0]]


def test_itemsets_found_on_planted_data() -> None:
    rng = np.random.default_rng(2)
    sets, _ = drawn_sets(20_000, rng, np.full(6, 1 / 6), max_draws=1, planted=(0, 1), planted_share=0.6)
    found = dn.FrequentItemsets(6, epsilon=4.0, top_k=3, max_items=3).run(sets, rng=rng)
    assert sorted(v for v, _, _ in found.top()) == [(0,), (0, 1), (1,)]
    assert found.mechanism == "SVSM" and found.n == 20_000


def test_bad_input_is_named() -> None:
    fi = dn.FrequentItems(ITEMS, epsilon=1.0, top_k=2, max_items=2)
    with pytest.raises(CategoryError, match=r"sets\[1\]"):
        fi.run([["mail"], ["mail", "phone"]] * 500)
    with pytest.raises(ValueError, match=r"sets\[0\] has 3 items; at most max_items=2"):
        fi.run([["mail", "maps", "chat"]] * 1000)
    with pytest.raises(ValueError, match="too few users for the groups"):
        fi.run([["mail"]] * 4)
    with pytest.raises(ValueError, match="sets must be a sequence of sets"):
        fi.run("mail")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="top_k must be an integer >= 1"):
            dn.FrequentItems(ITEMS, epsilon=1.0, top_k=bad, max_items=2)
        with pytest.raises(ValueError, match="top_k must be an integer >= 1"):
            dn.FrequentItemsets(ITEMS, epsilon=1.0, top_k=bad, max_items=2)
    with pytest.raises(ValueError, match="shares must be 3 positive shares"):
        dn.FrequentItems(ITEMS, epsilon=1.0, top_k=2, max_items=2, shares=(0.5, 0.5))
    with pytest.raises(ValueError, match="shares must be 3 positive shares"):
        dn.FrequentItemsets(ITEMS, epsilon=1.0, top_k=2, max_items=2, shares=(0.5, 0.0, 0.5))
    with pytest.raises(ValueError, match="percentile must be in"):
        dn.FrequentItems(ITEMS, epsilon=1.0, top_k=2, max_items=2, percentile=0)
    with pytest.raises(ValueError, match="oracle must be one of"):
        dn.FrequentItems(ITEMS, epsilon=1.0, top_k=2, max_items=2, oracle="rappor")
    with pytest.raises(ValueError, match="ell must be an integer >= 1"):
        dn.FrequentItemsets(ITEMS, epsilon=1.0, top_k=2, max_items=2, ell=0)
    with pytest.raises(ValueError, match="max_items must be an integer in 1..5"):
        dn.FrequentItems(ITEMS, epsilon=1.0, top_k=2, max_items=6)
    with pytest.raises(ValueError, match="epsilon"):
        dn.FrequentItems(ITEMS, epsilon=-1.0, top_k=2, max_items=2)
