"""The command line on a column for range queries: privatize with haar or hierarchical, estimate the quantiles.

Calibration: each quantile interval (the CDF's 95% band inverted, conservative) misses the true
quantile with probability at most about 5%; the test asks that the 95% intervals of the median and
the quartiles, from one seeded survey of n = 40,000, all cover (a fixed seed: the run is reproducible,
and it is one draw of an event of probability at least 0.85 by the union bound; the statistical
calibration itself is tests/stat/test_range_stat.py). Bad input: a value outside [low, high] is
refused naming its row.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.cli import _data as cli_data


@pytest.mark.parametrize("mechanism", ["haar", "hierarchical"])
def test_privatize_and_estimate_the_quantiles(cli, tmp_path: Path, mechanism: str) -> None:
    rng = np.random.default_rng(29)
    latency = np.clip(rng.lognormal(5.2, 0.5, 40_000), 0, 1000).round(1)
    data, private = tmp_path / "data.csv", tmp_path / "private.csv"
    pd.DataFrame({"ms": latency}).to_csv(data, index=False)
    result = cli("privatize", data, "--column", "ms", "--mechanism", mechanism, "--epsilon", 2,
                 "--low", 0, "--high", 1000, "--seed", 5, "-o", private)
    assert result.exit_code == 0, result.output
    m = dn.from_config(json.loads(cli_data.config_path(private).read_text()))
    assert isinstance(m, (dn.HaarHRR, dn.HierarchicalHistogram)) and m.bounds == (0.0, 1000.0)
    shown = cli("estimate", private, "--column", "ms", "--json")
    assert shown.exit_code == 0, shown.output
    out = json.loads(shown.stdout)
    assert out["n"] == latency.size and out["mechanism"] == m.name and len(out["bins"]["bins"]) == m.bins
    for row in out["quantiles"]:
        if row["q"] in (0.25, 0.5, 0.75):
            assert row["ci_low"] <= np.quantile(latency, row["q"]) <= row["ci_high"], row
    table = cli("estimate", private, "--column", "ms")
    assert table.exit_code == 0 and "quantile" in table.stdout and "band inverted" in table.stdout


def test_a_value_outside_the_range_is_refused(cli, tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    pd.DataFrame({"ms": [10.0, 20.0, 1500.0]}).to_csv(data, index=False)
    result = cli("privatize", data, "--column", "ms", "--mechanism", "haar", "--epsilon", 1,
                 "--low", 0, "--high", 1000, "-o", tmp_path / "p.csv")
    assert result.exit_code == 1
    assert "1500" in result.output and "outside the domain" in result.output
