"""Local hashing: structured reports are checked field by field."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms.hashing import REPORT_DTYPE

OLH10 = dn.OLH(10, epsilon=1.0)


def test_structured_olh_reports_with_wrong_types() -> None:
    """A structured array with signed or float fields is checked, not silently cast."""
    bad_value = np.zeros(1, dtype=[("seed", "<u8"), ("value", "<f8")])
    bad_value["value"] = 1.5
    with pytest.raises(ValueError, match="value"):
        OLH10.aggregate(bad_value)
    good = np.zeros(2, dtype=REPORT_DTYPE)
    assert OLH10.aggregate(good).n == 2
