"""Joint of three or more questions: the product domain, rows or columns of answers, the configuration,
k-way marginals that agree with each other exactly, and refusals naming the argument."""

from __future__ import annotations

import json

import numpy as np
import pytest

import deniable as dn
from deniable._aggregates import SupportCounts


def _exact(j: dn.Joint, truth: np.ndarray) -> dn.JointEstimate:
    """The estimate from support counts at their expectation (n = 2^20): the truth itself."""
    p, q = j.mechanism.support_rates()
    n = 2**20
    counts = np.round((q + (p - q) * truth) * n).astype(np.int64)
    return j.estimate_from(SupportCounts(j.mechanism.fingerprint, counts, n))


def test_three_questions_on_their_product() -> None:
    j = dn.Joint(["a", "b"], 3, [True, False], epsilon=2.0, mechanism="oue")
    assert j.shape == (2, 3, 2) and j.mechanism.k == 12 and j.questions[1] == (0, 1, 2)
    assert j.cell("b", 1, False) == 1 * 6 + 1 * 2 + 1 and j.domain[3] == ("a", 1, False)
    assert "2 x 3 x 2 categories, OUE" in repr(j)
    rows = [("a", 2, True), ("b", 0, False)]
    assert np.array_equal(j.privatize_many(rows, rng=5), j.privatize_many(["a", "b"], [2, 0], [True, False], rng=5))
    assert np.array_equal(j.privatize(("b", 1, True), rng=3), j.privatize("b", 1, True, rng=3))
    config = json.loads(json.dumps(j.to_config()))
    assert config["domain"] == [["a", "b"], 3, [True, False]] and dn.from_config(config) == j


def test_marginals_of_marginals_agree_exactly() -> None:
    j = dn.Joint([0, 1], [0, 1, 2], [0, 1], [0, 1], epsilon=2.0, mechanism="grr")
    truth = np.random.default_rng(2).dirichlet(np.ones(24))
    est = _exact(j, truth)
    assert est.table.shape == (2, 3, 2, 2)
    three = est.marginal((3, 0, 1))
    assert three.table.shape == (2, 2, 3) and three.positions == (3, 0, 1)
    np.testing.assert_allclose(three.table, truth.reshape(2, 3, 2, 2).sum(axis=2).transpose(2, 0, 1), atol=1e-5)
    # the same marginal by two routes: exactly equal shares and covariance
    direct, nested = est.marginal((0, 1)), three.marginal((1, 2))
    np.testing.assert_allclose(nested.frequencies, direct.frequencies, rtol=0, atol=1e-15)
    np.testing.assert_allclose(nested.covariance, direct.covariance, rtol=0, atol=1e-18)
    np.testing.assert_allclose(est.marginal(1).frequencies, direct.marginal(1).frequencies, atol=1e-15)
    frame = three.to_frame()
    assert list(frame.columns) == ["cell", "estimate", "std_error", "ci_low", "ci_high"] and len(frame) == 12
    assert frame["cell"][0] == (0, 0, 0)
    assert three.to_dict()["questions"] == [[0, 1], [0, 1], [0, 1, 2]]
    independent = est.independence(0, 1)
    assert independent.df == 2 and est.association(1, 3).cramers_v >= 0
    low, high = est.association(1, 3).confidence_interval()
    assert 0 <= low <= high <= 1


def test_two_questions_keep_their_form() -> None:
    j = dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=2.0)
    est = _exact(j, np.outer([0.4, 0.6], [0.2, 0.3, 0.5]).ravel())
    data = est.to_dict()
    assert data["first"] == ["yes", "no"] and data["second"] == ["A", "B", "C"] and data["cells"][1] == ["yes", "B"]
    assert est.independence().statistic < 1e-3 and est.association().cramers_v < 1e-2


def test_refusals_name_the_argument() -> None:
    with pytest.raises(ValueError, match="Joint needs two or more questions"):
        dn.Joint([0, 1], epsilon=1.0)
    j = dn.Joint([0, 1], [0, 1], [0, 1], epsilon=1.0)
    with pytest.raises(ValueError, match="give 3 columns of answers"):
        j.privatize_many([0, 1], [1, 0])
    with pytest.raises(ValueError, match="the columns need the same length; got 2 and 2 and 1"):
        j.privatize_many([0, 1], [1, 0], [1])
    with pytest.raises(ValueError, match=r"rows\[0\] must be a tuple of 3 answers"):
        j.privatize_many([(0, 1)])
    with pytest.raises(ValueError, match="cell needs 3 answers"):
        j.cell(0, 1)
    est = _exact(j, np.full(8, 1 / 8))
    for which in (3, (0, 0), (), (0, 5)):
        with pytest.raises(ValueError, match="which must be a question's position 0..2"):
            est.marginal(which)
    with pytest.raises(ValueError, match=r"which names questions \('a'\) but these questions have no names"):
        est.marginal("a")
    with pytest.raises(dn.ConfigError, match="'domain' must be the two questions' categories"):
        dn.from_config({**j.to_config(), "domain": [[0, 1]]})
