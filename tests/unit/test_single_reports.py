"""Every randomizer takes a list of its own single reports wherever it takes a batch.

Regression: RAPPOR's ``privatize`` returns a ``numpy.void``, and a list of
them was refused by ``reports_to_json``, ``aggregate`` and ``estimate``.
"""

from __future__ import annotations

import numpy as np
import pytest
from randomizers import RANDOMIZERS, Randomizer

from deniable.mechanisms import registry


def test_every_registered_randomizer_has_an_entry() -> None:
    assert {r.wire_id for r in RANDOMIZERS} == set(registry.entries())


@pytest.mark.parametrize("case", RANDOMIZERS, ids=lambda r: r.id)
def test_a_list_of_single_reports_is_a_batch(case: Randomizer) -> None:
    m = case.build()
    rng = np.random.default_rng(5)
    singles = [m.privatize(case.value, rng=rng) for _ in range(6)]
    batch = m.privatize_many([case.value] * 6, rng=np.random.default_rng(5))
    assert m.reports_to_json(singles) == [m.report_to_json(r) for r in singles]
    assert len(m.reports_to_json(singles)) == 6
    assert m.aggregate(singles).n == 6
    assert m.aggregate(singles).n == m.aggregate(batch).n
    assert m.estimate(singles).n == 6
    again = m.reports_from_json(m.reports_to_json(singles))
    assert m.reports_to_json(again) == m.reports_to_json(singles)


def test_single_structured_reports_of_another_configuration_are_refused() -> None:
    import deniable as dn

    wide = dn.RAPPOR(["a", "b", "c"], epsilon=2.0, num_bits=256)
    narrow = dn.RAPPOR(["a", "b", "c"], epsilon=2.0)
    singles = [wide.privatize("a") for _ in range(3)]
    with pytest.raises(ValueError, match="RAPPOR report"):
        narrow.aggregate(singles)


@pytest.mark.parametrize("case", RANDOMIZERS, ids=lambda r: r.id)
def test_the_wire_round_trip_of_one_report_and_many(case: Randomizer) -> None:
    """privatize -> to_json -> JSON text -> from_json -> aggregate -> estimate, as a device and the server do."""
    import json

    import deniable as dn

    original = case.build()
    m = dn.from_config(json.loads(json.dumps(original.to_config())))
    assert m == original
    one = m.privatize(case.value, rng=np.random.default_rng(1))
    text = json.dumps([m.report_to_json(one)])
    assert m.aggregate(m.reports_from_json(json.loads(text))).n == 1
    many = m.privatize_many([case.value] * 50, rng=np.random.default_rng(2))
    back = m.reports_from_json(json.loads(json.dumps(m.reports_to_json(many))))
    assert m.aggregate(back) == m.aggregate(many)
    assert m.estimate(back).n == 50
