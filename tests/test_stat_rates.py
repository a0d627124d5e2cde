"""tools/stat_rates.py: the false-failure rate of each statistical test, and the table in the docs.

The tool itself runs the statistical tests (minutes: ``python tools/stat_rates.py --check``);
here, in milliseconds, its arithmetic on recorded checks, and the table it last wrote into
docs/guide/testing.md: every test in it at most 1e-6 per run.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from deniable import testing

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("stat_rates", ROOT / "tools" / "stat_rates.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks the module up
    spec.loader.exec_module(module)
    return module


stat_rates = _tool()


@pytest.mark.deterministic
def test_a_row_sums_the_passed_alphas_and_the_power_misses() -> None:
    """Passed checks spend their alpha; a failed one is a power check with its estimated miss; the
    members of a family count through it, and hidden checks not at all."""
    with testing.recording() as made:
        testing.proportion_check(500, 1000, 0.5, 1e-7)
        testing.proportion_check(750, 1000, 0.5, 1e-7)  # power: 16 standard deviations off
        near = [testing.proportion_check(600, 1000, 0.5, 1e-7), testing.proportion_check(500, 1000, 0.5, 1e-7)]
        testing.family(near)  # power: some member fails
        with testing.recording(hide=True):
            testing.proportion_check(900, 1000, 0.5, 1e-7)  # data, not an assertion
    row = stat_rates.row_of("t", "passed", made)
    assert row.alphas == [1e-7] and len(row.misses) == 2
    far, family = row.misses
    assert far < 1e-9 and family == pytest.approx(stat_rates.power_miss(near[0]))
    assert 1e-6 < family < 0.5  # 600 of 1000 is one standard deviation beyond the band's end
    assert row.rate == pytest.approx(1e-7 + far + family)


@pytest.mark.deterministic
def test_power_misses_of_each_kind() -> None:
    """A huge effect misses with probability 0, a marginal one visibly; an audit gets no estimate."""
    import numpy as np

    assert stat_rates.power_miss(testing.chi_square_gof([700, 300], [0.5, 0.5], 1e-7)) < 1e-8
    assert stat_rates.power_miss(testing.chi_square_gof([535, 465], [0.5, 0.5], 1e-2)) > 0.01
    assert stat_rates.power_miss(testing.estimate_check(10.0, 0.0, 1.0, 1e-6)) < 1e-3
    assert stat_rates.power_miss(testing.coverage_check(1700, 2000, 0.95, 1e-6)) < 1e-12
    assert stat_rates.power_miss(testing.ks_gof(np.linspace(0.4, 1, 500), lambda u: u, 1e-6)) < 1e-12
    x = np.tile([-1.0, 1.0], 1000)
    assert stat_rates.power_miss(testing.variance_ratio_check(x, 0.5, 1e-6)) < 1e-12
    audit = testing.CheckResult("audit", 2.0, 1.0, 1e-6, False, "")
    assert math.isnan(stat_rates.power_miss(audit))
    row = stat_rates.row_of("t", "passed", [audit])
    assert row.rate == 0 and row.unestimated == 1


@pytest.mark.deterministic
def test_table_groups_cases_and_writes_between_the_markers(tmp_path: Path) -> None:
    rows = [stat_rates.Row("tests/a.py::test_t[x]", "passed", [1e-7]),
            stat_rates.Row("tests/a.py::test_t[y]", "passed", [3e-7]),
            stat_rates.Row("tests/b.py::test_u", "passed", [6e-7, 6e-7]),
            stat_rates.Row("tests/b.py::test_v", "passed")]
    text = stat_rates.table(rows)
    assert "#### `a.py`" in text and "| test_t | 3e-07 | 3e-07 | 0 | 1 (0) | 2 |" in text
    assert "#### `b.py`" in text and "| test_u |" in text and "test_v" not in text
    assert [r.test for r in stat_rates.over(rows)] == ["tests/b.py::test_u"]
    assert stat_rates.unrecorded(rows) == ["tests/b.py::test_v"]
    doc = tmp_path / "page.md"
    doc.write_text(f"intro\n{stat_rates.BEGIN}\nold\n{stat_rates.END}\nafter\n")
    stat_rates.write_doc(text, doc)
    assert doc.read_text() == f"intro\n{stat_rates.BEGIN}\n{text}\n{stat_rates.END}\nafter\n"
    stat_rates.write_doc(stat_rates.table([stat_rates.Row("tests/a.py::test_t", "passed", [2e-7])]), doc, merge=True)
    merged = doc.read_text()
    assert "| test_t | 2e-07 | 2e-07 | 0 | 1 (0) | 1 |" in merged and "| test_u |" in merged and "3e-07" not in merged
    assert merged.count("#### `a.py`") == 1


def test_the_documented_table_keeps_every_test_below_one_in_a_million() -> None:
    """The table in docs/guide/testing.md (``python tools/stat_rates.py --write``): every test passed
    and its rate, as printed, is at most 1e-6."""
    page = (ROOT / "docs" / "guide" / "testing.md").read_text()
    body = page[page.index(stat_rates.BEGIN):page.index(stat_rates.END)]
    rows = re.findall(r"^\| (test\w+) \| ([^|]+) \|", body, flags=re.M)
    assert len(rows) > 100, "the table is missing: python tools/stat_rates.py --write"
    bad = [(test, rate) for test, rate in rows if not re.fullmatch(r"[0-9.e+-]+", rate.strip())
           or float(rate) > stat_rates.LIMIT]
    assert not bad, bad
