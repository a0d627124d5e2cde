"""``deniable analyze FILE --weights w --strata s --cluster psu``: the design-based estimates of
deniable.survey on the file's columns, printed and as JSON, and one-line errors naming the option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deniable import survey


def _sample_file(path: Path, rng: np.random.Generator, n: int = 1500) -> pd.DataFrame:
    x = rng.normal(size=n)
    truth = rng.random(n) < 1 / (1 + np.exp(-(-0.5 + 0.8 * x)))
    frame = pd.DataFrame({
        "used": np.asarray(survey.Warner(p=0.75).privatize_many(truth, rng=rng)).astype(int),
        "x": x,
        "w": rng.uniform(1, 4, n),
        "stratum": rng.choice(["north", "south", "east"], n),
        "psu": rng.integers(0, 10, n),
    })
    frame.to_csv(path, index=False)
    return frame


def test_weights_strata_cluster(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    pytest.importorskip("patsy", reason="formulas need the survey extra")
    path = tmp_path / "sample.csv"
    frame = _sample_file(path, rng)
    args = ("--design", "Warner", "--p", "0.75", "--weights", "w", "--strata", "stratum", "--cluster", "psu")
    result = cli("analyze", path, *args, "--formula", "used ~ x", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    fit = survey.prevalence("used", survey.Warner(p=0.75), data=frame, weights="w", strata="stratum", cluster="psu")
    row = record["prevalence"][0]
    assert row["estimate"] == pytest.approx(fit.params["pi"], abs=1e-12)
    assert row["std_error"] == pytest.approx(fit.bse["pi"], abs=1e-12)
    assert row["design_effect"] == pytest.approx(fit.design_effect["pi"], abs=1e-12)
    assert record["sample"].startswith("weighted, 3 strata, 30 PSUs")
    res = survey.logit("used ~ x", frame, survey.Warner(p=0.75), weights="w", strata="stratum", cluster="psu")
    terms = {t["term"]: t for t in record["regression"]["terms"]}
    assert record["regression"]["cov_type"] == "linearization"
    for term, t in terms.items():
        assert t["std_error"] == pytest.approx(float(res.bse[term]), abs=1e-9)
        assert t["design_effect"] == pytest.approx(float(res.design_effect[term]), abs=1e-9)
    table = cli("analyze", path, *args, "--formula", "used ~ x")
    assert table.exit_code == 0 and "design effect" in table.stdout and "linearization" in table.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--weights", "weight"), "--weights: weights 'weight' is not a column of data"),
    (("--weights", "w", "--strata", "stratum", "--cluster", "psu", "--lonely-psu", "drop"),
     "--lonely-psu: lonely_psu must be one of"),
    (("--weights", "neg"), "--weights: weights must be finite and non-negative"),
    (("--strata", "one_psu", "--cluster", "psu"), "--strata: strata: stratum 'alone' has only one PSU"),
])
def test_bad_sample_options(cli, tmp_path: Path, rng: np.random.Generator, args: tuple[str, ...],
                            message: str) -> None:
    path = tmp_path / "sample.csv"
    frame = _sample_file(path, rng, n=200)
    frame["neg"] = -frame["w"]
    frame["one_psu"] = np.where(frame["psu"] == 0, "alone", "rest")
    frame.to_csv(path, index=False)
    result = cli("analyze", path, "--design", "Warner", "--p", "0.75", "--response", "used", *args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr, result.stderr
