"""PCKV: the paper's parameters, the exact privacy loss, configuration, merging, and bad input naming the argument.

The exact-epsilon check enumerates every output of small configurations: over every user of at most
``max_pairs`` pairs (values -1, 1, 0.3), the largest ratio of two users' output probabilities
(``transition_matrix``, computed from the rates, independently of the sampler) is at most ``e^epsilon``, and
equal to it (the claim is tight, never understated nor wasteful). The sampler is checked against the same
matrix by chi-square in ``tests/stat/test_key_value_stat.py``.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import deniable as dn
from deniable.errors import CategoryError, ReportError

KEYS = ["a.com", "b.org", "c.net"]


def _users(keys: list[str], most: int) -> list[dict[str, float]]:
    out: list[dict[str, float]] = []
    for size in range(most + 1):
        for chosen in itertools.combinations(keys, size):
            for values in itertools.product((-1.0, 1.0, 0.3), repeat=size):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("ell", [1, 2, 3])
def test_the_papers_allocation_and_realised_epsilon(eps: float, ell: int) -> None:
    ue = dn.PCKV(range(20), epsilon=eps, max_pairs=3, ell=ell)
    e = math.exp(eps)
    assert (ue.a, ue.b, ue.p) == pytest.approx((0.5, 2 / (e + 3), e / (e + 1)), rel=1e-5)  # 2**-32 steps
    grr = dn.PCKV(range(20), epsilon=eps, max_pairs=3, ell=ell, variant="grr")
    big = ell * (e - 1)  # the authors' code: a, b, p of PCKV-GRR
    a = (big + 2) / (big + 2 * (20 + ell))
    assert (grr.a, grr.b, grr.p) == pytest.approx((a, (1 - a) / (20 + ell - 1), (big + 1) / (big + 2)), rel=1e-5)
    for m in (ue, grr):
        assert 0.99 * eps <= m.epsilon <= eps


@pytest.mark.parametrize(("variant", "ell"), [("ue", 1), ("ue", 2), ("grr", 1), ("grr", 2), ("grr", 3)])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_exact_epsilon_is_the_largest_output_ratio(variant: str, ell: int, eps: float) -> None:
    m = dn.PCKV(KEYS, epsilon=eps, max_pairs=3, ell=ell, variant=variant)
    users = _users(KEYS, 3)
    _, law = m.transition_matrix(users)
    assert np.allclose(law.sum(axis=1), 1.0)
    ratio = float((law.max(axis=0) / law.min(axis=0)).max())
    assert ratio <= math.exp(m.epsilon) * (1 + 1e-12)
    assert ratio >= math.exp(m.epsilon) * (1 - 1e-6)  # tight: the mechanism spends what it claims


@pytest.mark.parametrize("variant", ["ue", "grr"])
def test_config_round_trip_merge_and_estimate(variant: str) -> None:
    m = dn.PCKV(KEYS, epsilon=2.0, max_pairs=2, variant=variant)
    back = dn.from_config(json.loads(json.dumps(m.to_config())))
    assert back == m and back.epsilon == m.epsilon and (back.a, back.b, back.p) == (m.a, m.b, m.p)
    users = [{"a.com": 0.5, "b.org": -0.2}, [("c.net", 1)], {}] * 300
    reports = m.privatize_many(users, rng=np.random.default_rng(1))
    whole = m.aggregate(reports)
    assert whole == m.aggregate(reports[:400]) + m.aggregate(reports[400:])
    assert m.aggregate(m.reports_from_json(m.reports_to_json(reports))) == whole
    est = m.estimate_from(whole)
    assert est.frequencies.shape == est.means.shape == (3,) and (est.std_errors > 0).all()
    assert ((est.means >= -1) & (est.means <= 1)).all()
    low, high = est.confidence_interval(of="mean")
    assert ((low >= -1) & (high <= 1) & (low <= est.means) & (est.means <= high)).all()
    table = est.to_dict()
    assert table["keys"] == KEYS and {"estimate", "mean", "mean_std_error", "mean_ci_low", "ell"} <= set(table)
    assert m.privatize({"a.com": 1.0}, rng=np.random.default_rng(2)) is not None


def test_ue_reports_unpack_to_ternary_vectors_and_back() -> None:
    m = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2)
    reports = m.privatize_many([{"a.com": 1.0}] * 50, rng=np.random.default_rng(3))
    ternary = m.unpack(reports)
    assert ternary.shape == (50, 5) and set(np.unique(ternary)) <= {-1, 0, 1}
    assert m.aggregate(ternary.astype(np.int64)) == m.aggregate(reports)


def test_grr_reports_are_key_and_sign_codes() -> None:
    m = dn.PCKV(KEYS, epsilon=8.0, max_pairs=1, variant="grr")  # almost always the truth
    reports = m.privatize_many([{"b.org": 1.0}] * 20, rng=np.random.default_rng(4))
    assert np.mean(reports == 2 * 1 + 1) > 0.9


def test_bad_input_names_the_argument() -> None:
    m = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2)
    with pytest.raises(CategoryError, match=r"users\[1\]: key") as info:
        m.privatize_many([{"a.com": 0.1}, {"z.com": 0.1}])
    assert info.value.index == 1
    with pytest.raises(ValueError, match=r"users\[0\]: the value of key 'a.com' must be a number in \[-1, 1\]"):
        m.privatize_many([{"a.com": 1.5}])
    with pytest.raises(ValueError, match=r"must be a number in \[-1, 1\]; got nan"):
        m.privatize_many([{"a.com": float("nan")}])
    with pytest.raises(ValueError, match=r"users\[0\] has 3 pairs; at most max_pairs=2"):
        m.privatize_many([{"a.com": 0, "b.org": 0, "c.net": 0}])
    with pytest.raises(ValueError, match=r"users\[0\] holds a key twice"):
        m.privatize_many([[("a.com", 0.1), ("a.com", 0.2)]])
    with pytest.raises(ValueError, match=r"users\[0\] must hold \(key, value\) pairs"):
        m.privatize_many([[("a.com", 0.1, 3)]])
    with pytest.raises(ValueError, match=r"users\[0\] must be a mapping"):
        m.privatize_many(["a.com"])
    with pytest.raises(ValueError, match="max_pairs must be an integer in 1..3"):
        dn.PCKV(KEYS, epsilon=1.0, max_pairs=4)
    with pytest.raises(ValueError, match="ell must be an integer in 1..2"):
        dn.PCKV(KEYS, epsilon=1.0, max_pairs=2, ell=3)
    with pytest.raises(ValueError, match="variant must be 'ue' or 'grr'"):
        dn.PCKV(KEYS, epsilon=1.0, max_pairs=2, variant="olh")
    with pytest.raises(ValueError, match="epsilon"):
        dn.PCKV(KEYS, epsilon=-1.0, max_pairs=2)
    with pytest.raises(ValueError, match="frequencies and means must have one entry per key"):
        m.variance(100, [0.1, 0.2], [0.0, 0.0])


def test_bad_reports_name_the_report() -> None:
    ue = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2)
    with pytest.raises(ReportError, match="hex string of 4 characters") as info:
        ue.reports_from_json(["8060", "80"])
    assert info.value.index == 1
    with pytest.raises(ReportError, match=r"report 0 sets a padding bit or both \+1 and -1"):
        ue.reports_from_json(["8080"])  # +1 and -1 at key 0
    with pytest.raises(ValueError, match="packed bytes"):
        ue.aggregate(np.zeros((2, 3), dtype=np.uint8))
    grr = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2, variant="grr")
    with pytest.raises(ReportError, match=r"must be an integer in 0..9") as info:
        grr.reports_from_json([3, 10])
    assert info.value.index == 1
    with pytest.raises(ReportError, match="must be an integer; got True"):
        grr.reports_from_json([True])
    with pytest.raises(ValueError, match="1-D array of integers"):
        grr.aggregate(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="unpack is for PCKV-UE"):
        grr.unpack([1])


def test_config_from_elsewhere_is_checked() -> None:
    config = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2).to_config()
    for field, junk in [("variant", "olh"), ("keep_numerator", 0), ("ell", 3), ("other_numerator", 1 << 31)]:
        bad = json.loads(json.dumps(config))
        bad["params"][field] = junk
        with pytest.raises(ValueError, match=field if field != "keep_numerator" else "positive integers"):
            dn.from_config(bad)


def test_an_empty_aggregate_is_refused() -> None:
    m = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2)
    with pytest.raises(ValueError, match="n >= 1"):
        m.estimate([])
    with pytest.raises(ValueError, match="target 'population' only"):
        m.estimate(m.privatize_many([{}]), target="respondents")
