"""``deniable estimate --by COLUMN``: the privatized column estimated slice by slice, from CSV and Parquet,
exactly as ``m.estimate(reports, by=labels)`` does in Python."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.cli import _data as cli_data


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_slices_match_the_python_estimate(cli, tmp_path: Path, rng, kind: str) -> None:  # type: ignore[no-untyped-def]
    n = 3000
    version = rng.choice(["v1", "v2", "v3"], n, p=[0.5, 0.49, 0.01])
    answers = np.where(version == "v1", rng.choice(["A", "B"], n, p=[0.8, 0.2]), rng.choice(["A", "B"], n))
    data, private = tmp_path / f"d.{kind}", tmp_path / f"p.{kind}"
    frame = pd.DataFrame({"answer": answers, "version": version})
    frame.to_csv(data, index=False) if kind == "csv" else frame.to_parquet(data)
    made = cli("privatize", data, "-c", "answer", "-e", 2, "--categories", "A,B", "-o", private)
    assert made.exit_code == 0, made.output
    # small chunks: the slices' aggregates are merged over chunks
    result = cli("estimate", private, "-c", "answer", "--by", "version", "--json", "--chunk-size", 700)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    m = dn.from_config(cli_data.config_path(private).read_text())
    written = pd.read_csv(private, dtype=str) if kind == "csv" else pd.read_parquet(private)
    reports = m.reports_from_json([json.loads(f'"{r}"') for r in written["answer"]])
    with pytest.warns(dn.DeniableWarning):
        expected = m.estimate(reports, by=np.asarray(written["version"], dtype=str)).to_dict()
    assert out["by"] == "version" and out["min_n"] == expected["min_n"]
    assert [r["slice"] for r in out["rows"]] == expected["slices"]
    for key in ("category", "estimate", "std_error", "ci_low", "ci_high", "n", "small"):
        assert [r[key] for r in out["rows"]] == pytest.approx(expected[key], abs=1e-12), key
    assert [r["small"] for r in out["rows"] if r["slice"] == "v3"] == [True, True]
    table = cli("estimate", private, "-c", "answer", "--by", "version")
    assert table.exit_code == 0, table.output
    text = " ".join(table.stdout.split())
    assert "by version: 3 slices" in text and "1 slice(s) under" in text and "small" in text


def test_by_refusals(cli, tmp_path: Path, rng) -> None:  # type: ignore[no-untyped-def]
    data, private = tmp_path / "d.csv", tmp_path / "p.csv"
    pd.DataFrame({"x": rng.uniform(0, 1, 40), "day": ["mon"] * 39 + ["tue"]}).to_csv(data, index=False)
    assert cli("privatize", data, "-c", "x", "-m", "duchi", "-e", 1, "--low", 0, "--high", 1,
               "-o", private).exit_code == 0
    missing = cli("estimate", private, "-c", "x", "--by", "week")
    assert missing.exit_code != 0 and "column 'week' not found" in missing.output
    one = cli("estimate", private, "-c", "x", "--by", "day")
    assert one.exit_code != 0 and "--by day: by: slice 'tue' (1 reports): an estimate needs at least 2" in \
        " ".join(one.output.split())
    assert "without --dask" in cli("estimate", private, "-c", "x", "--by", "day", "--plot", tmp_path / "a.png").output


def test_plan_difference_gives_the_respondents_per_arm(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("plan", "--k", 4, "--epsilon", 2, "--difference", "0.40,0.44", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    expected = dn.difference_sample_size(dn.GRR(4, epsilon=2.0), 0.40, 0.44, power=0.8, level=0.95)
    assert out["difference"] == {"share_a": 0.4, "share_b": 0.44, "power": 0.8, "level": 0.95, "per_arm": expected}
    table = cli("plan", "--k", 4, "--epsilon", 2, "--difference", "0.40,0.44")
    assert f"A/B test: respondents per arm to detect 0.4 vs 0.44 with power 0.8 at the 0.05 level: {expected:,}" in \
        " ".join(table.stdout.split())
    bad = cli("plan", "--k", 4, "--epsilon", 2, "--difference", "0.4,0.4")
    assert bad.exit_code != 0 and "--difference: frequency_a and frequency_b must differ" in bad.output
