"""Joint: the product domain's encoding, the oracle choice, exact marginals and input checks."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.aggregates import SupportCounts
from deniable.joint import Joint


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
