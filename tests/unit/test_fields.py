"""deniable.wire.to_field / from_fields: the text deniable-embed.js keeps in a platform's field."""

from __future__ import annotations

import json

import numpy as np
import pytest

import deniable as dn
from deniable import survey
from deniable.errors import ReportError
from deniable.wire import REPORT_FORMAT, from_fields, to_field

GRR = dn.GRR(["a", "b", "c"], epsilon=1.0)
OLH = dn.OLH(2**16, epsilon=8.0, g=2**20)


def test_to_field_is_what_the_embed_writes() -> None:
    text = to_field(GRR, "b")
    assert text == (f'{{"format":"{REPORT_FORMAT}","version":1,"fingerprint":"{GRR.fingerprint}",'
                    '"report":"b"}')
    design = survey.design("FR", ["1/6", "1/6"])
    assert json.loads(to_field(design, True))["fingerprint"] == "18f59630de152da6" == design.fingerprint


def test_from_fields_leaves_out_empty_cells_and_keeps_wide_integers() -> None:
    wide = {"seed": str(2**54 + 1), "value": 3}
    cells = [to_field(GRR, "a"), None, "", float("nan"), "  ", to_field(GRR, "c")]
    reports, held = from_fields(cells, GRR)
    assert reports == ["a", "c"] and held.tolist() == [True, False, False, False, False, True]
    (report,), _ = from_fields([to_field(OLH, wide)], OLH)
    assert int(OLH.reports_from_json([report], wire_version=2)["seed"][0]) == 2**54 + 1


@pytest.mark.parametrize(("cell", "says"), [
    ("b", "not the text deniable-embed writes"),
    ('{"format":"deniable.report","version":2,"fingerprint":"0","report":"b"}', "not the text"),
    ('{"format":"deniable.mechanism"}', "not the text"),
    (to_field(dn.GRR(["a", "b", "c"], epsilon=2.0), "b"), "fingerprint"),
    (json.dumps({"format": "deniable.report", "version": 1, "fingerprint": GRR.fingerprint}), "fingerprint"),
])
def test_from_fields_names_the_bad_cell(cell: str, says: str) -> None:
    with pytest.raises(ReportError) as info:
        from_fields([to_field(GRR, "a"), None, cell], GRR)
    assert info.value.index == 2 and says in info.value.reason


def test_dict_cells_are_read_as_decoded_json() -> None:
    reports, held = from_fields([json.loads(to_field(GRR, "a")), np.nan], GRR)
    assert reports == ["a"] and held.tolist() == [True, False]
