"""SetValued: configuration, merging, bad input naming the argument, and the planner's ell."""

from __future__ import annotations

import json

import numpy as np
import pytest

import deniable as dn
from deniable.errors import CategoryError

ITEMS = ["mail", "maps", "chat", "news"]


@pytest.mark.parametrize("oracle", ["grr", "oue", "olh", "auto"])
def test_config_round_trip_merge_and_estimate(oracle: str) -> None:
    m = dn.SetValued(ITEMS, epsilon=2.0, max_items=3, ell=2, oracle=oracle)
    assert dn.from_config(json.loads(json.dumps(m.to_config()))) == m
    rng = np.random.default_rng(1)
    sets = [["mail", "chat"], ["maps"], [], ["news", "mail", "maps"]] * 500
    reports = m.privatize_many(sets, rng=rng)
    whole = m.aggregate(reports)
    assert whole == m.aggregate(reports[:700]) + m.aggregate(reports[700:])
    est = m.estimate_from(whole)
    assert est.frequencies.shape == (4,) and (est.std_errors > 0).all()
    assert est.frequent(top=2)[0][0] in ITEMS
    assert set(est.to_dict()) >= {"items", "estimate", "std_error", "ell"}


def test_bad_input_names_the_argument() -> None:
    m = dn.SetValued(ITEMS, epsilon=1.0, max_items=2)
    with pytest.raises(ValueError, match=r"sets\[1\] has 3 items; at most max_items=2"):
        m.privatize_many([["mail"], ["mail", "maps", "chat"]])
    with pytest.raises(CategoryError, match=r"sets\[0\]") as info:
        m.privatize_many([["mail", "tv"]])
    assert info.value.index == 0
    with pytest.raises(ValueError, match=r"sets\[0\] holds an item twice"):
        m.privatize_many([["mail", "mail"]])
    with pytest.raises(ValueError, match=r"sets\[0\] must be a set of items"):
        m.privatize_many(["mail"])
    with pytest.raises(ValueError, match="ell must be an integer in 1..2"):
        dn.SetValued(ITEMS, epsilon=1.0, max_items=2, ell=3)
    with pytest.raises(ValueError, match="max_items must be an integer in 1..4"):
        dn.SetValued(ITEMS, epsilon=1.0, max_items=0)
    with pytest.raises(ValueError, match=r"epsilon=43.0 with ell=2 runs GRR at .* = 43.69\d*, which it cannot"):
        dn.SetValued(ITEMS, epsilon=43.0, max_items=2, oracle="grr")


def test_the_planner_trades_truncation_bias_for_variance() -> None:
    """Few long sets and few respondents: a short ell; many respondents: the bias matters, ell grows."""
    shares = [0.5, 0.3, 0.1, 0.05, 0.05]
    small = dn.best_set_length(shares, items=20, epsilon=1.0, n=2_000)
    large = dn.best_set_length(shares, items=20, epsilon=1.0, n=10_000_000)
    assert 1 <= small < large <= 5
    with pytest.raises(ValueError, match="length_shares"):
        dn.best_set_length([0.5, 0.6], items=5, epsilon=1.0, n=100)


def test_amplified_epsilon_of_a_hash_family_too_long_to_search_is_the_oracles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OLH on 3 items padded to 3 is amplified (0.763 at an oracle epsilon of 1), so SetValued runs it
    higher to spend epsilon 1; a search cut short states the oracle's epsilon, so it runs at epsilon."""
    from deniable.mechanisms import _set_privacy

    assert _set_privacy.amplified_epsilon(dn.OLH(6, epsilon=1.0), 3, 3) == pytest.approx(0.7633825, abs=1e-6)
    m = dn.SetValued(3, epsilon=1.0, max_items=3, oracle="olh")
    assert 0.999 < m.epsilon <= 1.0 < m.oracle_epsilon
    monkeypatch.setattr(_set_privacy, "_ENTRIES_PER_BLOCK", 1)  # one hash matrix a block
    monkeypatch.setattr(_set_privacy, "_MAX_ENTRIES", 0)  # no second block
    cut = dn.SetValued(3, epsilon=1.0, max_items=3, oracle="olh")
    assert cut.epsilon == cut.oracle_epsilon <= 1.0


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("ell", [1, 2, 3, 5])
def test_epsilon_is_the_whole_report_spent_in_full_never_above(epsilon: float, ell: int) -> None:
    """GRR at ln(ell (e^eps - 1) + 1) rounded down: the exact loss is eps to the weights' rounding, never above."""
    grr = dn.SetValued(10, epsilon=epsilon, max_items=5, ell=ell, oracle="grr")
    assert epsilon * (1 - 1e-7) < grr.epsilon <= epsilon
    assert grr.oracle_epsilon == pytest.approx(np.log(ell * np.expm1(epsilon) + 1), rel=1e-7)
    assert grr.oracle_epsilon <= np.log(ell * np.expm1(epsilon) + 1)
    oue = dn.SetValued(10, epsilon=epsilon, max_items=5, ell=ell, oracle="oue")
    assert oue.epsilon == oue.oracle_epsilon <= epsilon
    auto = dn.SetValued(10, epsilon=epsilon, max_items=5, ell=ell)
    assert auto.epsilon <= epsilon
    assert float(auto.mechanism.variance(1)[0]) <= min(float(grr.mechanism.variance(1)[0]),
                                                        float(oue.mechanism.variance(1)[0]))


def test_a_config_stored_with_grr_at_epsilon_loads_and_states_its_amplified_epsilon() -> None:
    """Before the amplified budget, SetValued ran GRR at epsilon and its configuration claimed epsilon."""
    k, ell = len(ITEMS), 2
    oracle = dn.GRR(k + ell, epsilon=2.0)
    old = {"format": "deniable.mechanism", "version": 1, "mechanism": "set-valued", "domain": ITEMS,
           "epsilon": oracle.epsilon, "params": {"max_items": 3, "ell": ell, "oracle": oracle.to_config()}}
    m = dn.from_config(json.loads(json.dumps(old)))
    assert m.oracle_epsilon == oracle.epsilon
    assert m.epsilon == pytest.approx(np.log1p(np.expm1(oracle.epsilon) / ell), abs=1e-9)
    assert m.epsilon < 1.5 and m.to_config()["epsilon"] == m.epsilon
    assert dn.from_config(m.to_config()) == m
    with pytest.raises(dn.errors.ConfigError, match="config field 'epsilon' says"):
        dn.from_config({**old, "epsilon": 1.0})  # neither the exact nor the oracle's: refused
