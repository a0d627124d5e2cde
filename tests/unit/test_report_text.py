"""Reports as column text (deniable.wire._text): yes/no words in the column's own spelling, round trips."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.errors import ReportError
from deniable.wire._text import from_text, parse_yes_no, to_text, yes_no_labels


@pytest.mark.parametrize(("cell", "labels"), [
    ("yes", ("no", "yes")), (" No ", ("No", "Yes")), ("YES", ("NO", "YES")), ("1", ("0", "1")),
    ("0", ("0", "1")), ("False", ("False", "True")), ("TRUE", ("FALSE", "TRUE")),
    ("true", None), ("false", None), ("maybe", None), ("", None),
])
def test_yes_no_labels_follow_the_spelling(cell: str, labels: tuple[str, str] | None) -> None:
    assert yes_no_labels(cell) == labels


def test_parse_yes_no_names_the_first_bad_cell() -> None:
    yes, bad = parse_yes_no(np.array(["Yes", " 0", "TRUE", "nope", "x"]))
    assert yes[:3].tolist() == [True, False, True] and bad == 3
    assert parse_yes_no(np.array(["no", "1"]))[1] is None


@pytest.mark.parametrize("labels", [None, ("No", "Yes"), ("0", "1")])
def test_binary_reports_round_trip_in_their_words(labels: tuple[str, str] | None) -> None:
    m = dn.BinaryRR(prob=0.75)
    reports = m.privatize_many(np.arange(40) % 3 == 0, rng=5)
    text = to_text(m, reports, labels)
    assert set(np.asarray(text).tolist()) <= set(labels or ("true", "false"))
    assert m.aggregate(from_text(m, np.asarray(text, dtype=str))) == m.aggregate(reports)


def test_other_reports_round_trip_and_bad_cells_are_indexed() -> None:
    for m in (dn.GRR(["A", "B", "C"], epsilon=1.0), dn.OUE(5, epsilon=1.0), dn.OLH(5, epsilon=1.0),
              dn.SubsetSelection(6, epsilon=1.0)):
        reports = m.privatize_many([m.domain[i % m.k] for i in range(30)], rng=2)
        text = np.asarray(to_text(m, reports), dtype=str)
        assert m.aggregate(from_text(m, text)) == m.aggregate(reports)
    m = dn.OLH(5, epsilon=1.0)
    text = np.asarray(to_text(m, m.privatize_many([m.domain[0]] * 3, rng=1)), dtype=str)
    text[2] = "{oops"
    with pytest.raises(ReportError) as caught:
        from_text(m, text)
    assert caught.value.index == 2 and "invalid JSON" in caught.value.reason
