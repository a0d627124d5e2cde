"""Estimate: alignment with the domain, the frame, and the estimate of no reports."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn


def test_domain_alignment_and_frame() -> None:
    m = dn.GRR(["red", "green", "blue"], epsilon=2.0)
    est = m.estimate(["red", "red", "blue", "green", "red"])
    assert est.domain == ("red", "green", "blue")
    frame = est.to_frame()
    assert list(frame.index) == ["red", "green", "blue"]
    np.testing.assert_array_equal(frame["estimate"].to_numpy(), est.frequencies)
    assert "GRR" in repr(est) and "red" in repr(est)
    assert est.counts.sum() == pytest.approx(est.n)  # GRR estimates sum to 1 exactly


def test_estimate_of_nothing() -> None:
    m = dn.OUE(5, epsilon=1.0)
    est = m.estimate_from(m.aggregate([]))
    assert est.n == 0 and np.all(np.isnan(est.frequencies))
    with pytest.raises(ValueError, match="n >= 1"):
        est.ci(0.95)
