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
    """OLH on 3 items padded to 3 is amplified (0.763 at epsilon 1); a search cut short states epsilon."""
    from deniable.mechanisms import _set_privacy

    m = dn.SetValued(3, epsilon=1.0, max_items=3, oracle="olh")
    assert m.amplified_epsilon == pytest.approx(0.7633825, abs=1e-6)
    monkeypatch.setattr(_set_privacy, "_ENTRIES_PER_BLOCK", 1)  # one hash matrix a block
    monkeypatch.setattr(_set_privacy, "_MAX_ENTRIES", 0)  # no second block
    cut = dn.SetValued(3, epsilon=1.0, max_items=3, oracle="olh")
    assert cut.amplified_epsilon == cut.epsilon
