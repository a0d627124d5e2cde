"""The closed-form debiasing functions: arguments, the textbook numbers, agreement with the estimators."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import deniable as dn
from deniable._estimate import SupportCounts


def test_debias_function_arguments() -> None:
    with pytest.raises(ValueError, match=r"prob must be in \(0\.5, 1\]"):
        dn.debias_binary(0.3, 1.5)
    with pytest.raises(ValueError, match="prob must be in"):
        dn.debias_binary(0.3, 0.5)
    with pytest.raises(ValueError, match="mean_release must be shares"):
        dn.debias_binary(1.2, 0.75)
    with pytest.raises(ValueError, match="mean_releases must be a 1-D sequence"):
        dn.debias_categorical([1.0], 0.75)
    with pytest.raises(ValueError, match="prob must be in"):
        dn.debias_categorical([0.5, 0.25, 0.25], 0.3)


def test_debias_binary() -> None:
    assert dn.debias_binary(0.364, 0.75) == pytest.approx(0.228, abs=1e-12)


def test_debias_categorical() -> None:
    got = dn.debias_categorical([0.165, 0.349, 0.284, 0.202], 0.75)
    np.testing.assert_allclose(got, [0.1225, 0.3985, 0.301, 0.178], atol=1e-9)


@given(st.integers(51, 99), st.integers(0, 100))
@settings(max_examples=60, deadline=None)
def test_debias_binary_inverts_expected_share(p_pct: int, pi_pct: int) -> None:
    p, pi = p_pct / 100, pi_pct / 100
    share = p * pi + (1 - p) * (1 - pi)
    assert dn.debias_binary(share, p) == pytest.approx(pi, abs=1e-12)
    est = dn.BinaryRR(prob=p).estimate_from(
        SupportCounts(dn.BinaryRR(prob=p).fingerprint, np.array([1 - share, share]) * 1000, 1000))
    assert est.frequencies[1] == pytest.approx(dn.debias_binary(share, p), abs=1e-12)


@given(st.integers(2, 12), st.data())
@settings(max_examples=60, deadline=None)
def test_debias_categorical_is_the_grr_estimator(k: int, data: st.DataObject) -> None:
    counts = np.array(data.draw(st.lists(st.integers(0, 1000), min_size=k, max_size=k)))
    if counts.sum() == 0:
        counts[0] = 1
    p = data.draw(st.integers(100 // k + 1, 99)) / 100
    m = dn.GRR(k, prob=p)
    est = m.estimate_from(SupportCounts(m.fingerprint, counts, int(counts.sum())))
    np.testing.assert_allclose(dn.debias_categorical(counts / counts.sum(), p), est.frequencies,
                               rtol=0, atol=1e-12)
    assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-12)  # GRR estimates sum to 1 exactly
