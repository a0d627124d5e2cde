"""Categorical domains: positions, and categories of different types kept apart."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn


def test_mixed_type_domain_keeps_true_and_one_apart() -> None:
    m = dn.GRR([1, True, "1"], epsilon=1.0)
    np.testing.assert_array_equal(m.domain_obj.encode([1, True, "1", True]), [0, 1, 2, 1])
    assert m.aggregate([True, True, 1]).counts.tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="not in the domain"):
        m.privatize(1.5)
    assert dn.from_config(m.to_config()) == m
