"""Joint: the product domain's encoding, the oracle choice, exact marginals and input checks."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable._aggregates import SupportCounts
from deniable._joint import Joint


def test_pairs_are_cells_of_the_product_domain() -> None:
    j = Joint(["a", "b"], [10, 20, 30], epsilon=1.0, mechanism="grr")
    assert j.cell("b", 20) == 4 and j.cell("a", 10) == 0
    assert j.mechanism.k == 6 and j.epsilon == pytest.approx(1.0, rel=0.01)
    assert "2 x 3 categories, GRR" in repr(j)
    assert j.privatize("a", 30) in range(6)  # the OS CSPRNG, as on a device


def test_auto_takes_the_lower_variance_oracle() -> None:
    assert isinstance(Joint([0, 1], [0, 1], epsilon=3.0).mechanism, dn.GRR)  # K = 4: GRR
    assert isinstance(Joint(list(range(8)), list(range(8)), epsilon=1.0).mechanism, dn.OUE)  # K = 64


@pytest.mark.parametrize("mechanism", ["grr", "oue", "sue"])
def test_exact_counts_give_exact_marginals_and_no_dependence(mechanism: str) -> None:
    """Support counts at their expectation: the estimate is the truth, W = 0 for an independent table."""
    j = Joint([0, 1], [0, 1, 2], epsilon=2.0, mechanism=mechanism)
    truth = np.outer([0.25, 0.75], [0.2, 0.3, 0.5]).ravel()
    p, q = j.mechanism.support_rates()
    n = 2**20
    counts = (q + (p - q) * truth) * n
    est = j.estimate_from(SupportCounts(j.mechanism.fingerprint, np.round(counts).astype(np.int64), n))
    assert est.table == pytest.approx(truth.reshape(2, 3), abs=1e-5)
    assert est.marginal(0).frequencies == pytest.approx([0.25, 0.75], abs=1e-5)
    assert est.marginal(1).frequencies == pytest.approx([0.2, 0.3, 0.5], abs=1e-5)
    assert est.independence().statistic < 1e-3 and est.independence().df == 2
    low, high = est.marginal(1).ci(0.95)
    assert np.all(low < [0.2, 0.3, 0.5]) and np.all(high > [0.2, 0.3, 0.5])
    assert np.allclose(np.diag(est.covariance), est.cells.std_errors**2, rtol=1e-6)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="mechanism must be one of"):
        Joint([0, 1], [0, 1], epsilon=1.0, mechanism="olh")
    with pytest.raises(ValueError, match="epsilon"):
        Joint([0, 1], [0, 1], epsilon=-1.0)
    j = Joint([0, 1], [0, 1], epsilon=1.0)
    with pytest.raises(ValueError, match="same length"):
        j.privatize_many([0, 1], [0])
    with pytest.raises(ValueError, match="which must be 0"):
        j.estimate(j.privatize_many([0, 1], [1, 0])).marginal(2)
    with pytest.raises(ValueError, match="n >= 1"):
        j.estimate_from(j.aggregate([]))
    with pytest.raises(dn.CategoryError):
        j.privatize(0, 5)


# ------------------------------------------------------------ Joint as a mechanism (wire id "joint")

@pytest.mark.parametrize("mechanism", ["grr", "oue", "sue"])
def test_from_config_of_to_config_is_the_same_joint(mechanism: str) -> None:
    import json

    j = Joint(["yes", "no"], [10, 20, 30], epsilon=2.0, mechanism=mechanism)
    config = json.loads(json.dumps(j.to_config()))
    assert (config["mechanism"], config["domain"]) == ("joint", [["yes", "no"], [10, 20, 30]])
    assert config["params"]["oracle"] == j.mechanism.to_config() and config["epsilon"] == j.epsilon
    back = dn.from_config(config)
    assert back == j and hash(back) == hash(j) and back.fingerprint == j.fingerprint
    assert (back.first, back.second, type(back.mechanism)) == (j.first, j.second, type(j.mechanism))
    assert Joint(["no", "yes"], [10, 20, 30], epsilon=2.0, mechanism=mechanism) != j


def test_config_refusals_name_the_field() -> None:
    config = Joint(["a", "b"], [1, 2, 3], epsilon=1.0, mechanism="grr").to_config()
    for bad, words in [
        ({**config, "domain": ["a", "b"]}, "'domain' must be the two questions' categories"),
        ({**config, "domain": [["a", "b"], [1, 2]]}, "on the 4 cells 0..3; got GRR"),
        ({**config, "params": {"oracle": dn.OLH(6, epsilon=1.0).to_config()}}, "one of \\['grr', 'oue', 'sue'\\]"),
        ({**config, "params": {"oracle": dn.GRR(list("abcdef"), epsilon=1.0).to_config()}}, "cells 0..5"),
        ({**config, "params": {}}, "missing field"),
    ]:
        with pytest.raises(dn.ConfigError, match=words):
            dn.from_config(bad)


def test_pairs_privatize_as_the_two_answers_do() -> None:
    j = Joint(["a", "b"], [1, 2, 3], epsilon=1.0, mechanism="oue")
    pairs = [("a", 3), ["b", 1], ("b", 2)]
    same = j.privatize_many(["a", "b", "b"], [3, 1, 2], rng=7)
    assert np.array_equal(j.privatize_many(pairs, rng=7), same)
    square = Joint([0, 1], [0, 1], epsilon=1.0, mechanism="oue")
    assert np.array_equal(square.privatize_many(np.array([[0, 1], [1, 0]]), rng=7),
                          square.privatize_many([0, 1], [1, 0], rng=7))
    assert np.array_equal(j.privatize(("b", 2), rng=3), j.privatize("b", 2, rng=3))
    assert j.domain[:4] == (("a", 1), ("a", 2), ("a", 3), ("b", 1))
    with pytest.raises(ValueError, match=r"pairs\[1\] must be a pair"):
        j.privatize_many([("a", 1), ("b", 1, 2)])
    with pytest.raises(ValueError, match="sequence of pairs"):
        j.privatize_many("ab")
    with pytest.raises(ValueError, match=r"pairs\[0\] must be a pair"):
        j.privatize("a")


def test_aggregates_carry_the_joint_configuration() -> None:
    """A joint's aggregate names its configuration (two questions), so 2 x 3 and 3 x 2 do not mix; one made by
    its oracle (before Joint was a mechanism) is still estimated."""
    j = Joint(["a", "b"], [1, 2, 3], epsilon=1.0, mechanism="grr")
    reports = j.privatize_many([("a", 1), ("b", 3)] * 50, rng=1)
    stat = j.aggregate(reports)
    assert stat.fingerprint == j.fingerprint != j.mechanism.fingerprint
    assert j.aggregate_from_json(stat.to_json()) == stat
    by_oracle = j.estimate_from(j.mechanism.aggregate(reports))
    assert np.array_equal(j.estimate_from(stat).table, by_oracle.table) and j.estimate(reports).n == 100
    turned = Joint([1, 2, 3], ["a", "b"], epsilon=1.0, mechanism="grr")
    with pytest.raises(dn.AggregateError, match="another mechanism configuration"):
        turned.estimate_from(stat)
    with pytest.raises(ValueError, match="target 'population' only"):
        j.estimate_from(stat, target="respondents")
    back = j.reports_from_json(j.reports_to_json(reports))
    assert j.aggregate(back) == stat and j.report_bits == j.mechanism.report_bits and j.report_kind == "category"


def test_registered_for_no_recipe_planner_or_browser() -> None:
    from deniable.mechanisms import registry

    e = registry.entry("joint")
    assert (e.cls, e.kind, e.candidate, e.browser, e.recipes) == (Joint, "joint", False, False, ())
