"""``deniable analyze``: a survey design's prevalence from a CSV or Parquet file, and the demo's part 2.

The printed prevalence is the survey package's on the same answers (exact
agreement, no tolerance beyond the printed digits); the Nigeria forced-response
item (Blair, Imai & Zhou 2015, read from the shared data when present)
reproduces RRreg's published 0.2619 (SE 0.0144, n = 2,435). The demo's part 2
and its logistic regression on age are checked with a calibrated band:
|estimate - truth| < z(alpha/2) SE with alpha = 1e-6 per assertion, and power
checks (the raw share of "yes" answers, what a missing debias step would
print, and a slope of 0 are rejected by the same band). With --formula the
Nigeria item reproduces Blair, Imai & Zhou's Table 3.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from deniable import survey
from deniable.testing import estimate_check

NIGERIA = Path(__file__).resolve().parents[2] / "examples" / "data" / "nigeria.csv"  # rr's replication data


def _answers_file(path: Path, rng: np.random.Generator, n: int = 4000) -> dict[str, np.ndarray]:
    import pandas as pd

    truth = rng.random(n) < 0.3
    group = rng.integers(1, 3, n)
    frame = pd.DataFrame({
        "used": survey.design("FR", ["1/6", "1/6"]).privatize_many(truth, rng=rng),
        "lied": survey.design("SLD", [0.3, 0.7]).privatize_many(truth, group=group, rng=rng).astype(int),
        "grp": group,
        "age": rng.integers(18, 31, n),
    })
    frame["used"] = np.where(frame["used"], "yes", "no")
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return {c: frame[c].to_numpy() for c in frame.columns}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_prevalence_table_and_json(cli, tmp_path: Path, rng: np.random.Generator, suffix: str) -> None:
    path = tmp_path / f"answers{suffix}"
    data = _answers_file(path, rng)
    fit = survey.prevalence((data["used"] == "yes").astype(int), survey.design("FR", ["1/6", "1/6"]))
    result = cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--response", "used", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    (pi,) = record["prevalence"]
    assert pi["parameter"] == "pi" and pi["estimate"] == pytest.approx(fit.params["pi"], abs=1e-12)
    assert pi["std_error"] == pytest.approx(fit.bse["pi"], abs=1e-12)
    assert (pi["ci_low"], pi["ci_high"]) == pytest.approx(fit.ci()["pi"], abs=1e-12)
    assert record["epsilon"] == pytest.approx(np.log(5)) and record["n"] == 4000 and record["missing"] == 0
    table = cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--response", "used")
    assert table.exit_code == 0, table.output
    assert f"{fit.params['pi']:.4f}" in table.stdout and f"{fit.bse['pi']:.4f}" in table.stdout
    assert "FR (p = 1/6, 1/6): n = 4,000, epsilon = 1.609" in table.stdout


def test_a_two_group_design_takes_its_group_column(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "answers.csv"
    data = _answers_file(path, rng)
    d = survey.design("SLD", [0.3, 0.7])
    fit = survey.prevalence(data["lied"], d, group=data["grp"])
    result = cli("analyze", path, "--design", "SLD", "--p", "0.3,0.7", "--response", "lied", "--group", "grp",
                 "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert [p["parameter"] for p in record["prevalence"]] == ["pi", "t"]
    assert record["prevalence"][0]["estimate"] == pytest.approx(fit.params["pi"], abs=1e-12)
    assert record["epsilon"] is None and record["reveals_truth"] is True
    table = cli("analyze", path, "--design", "SLD", "--p", "0.3,0.7", "--response", "lied", "--group", "grp")
    assert "epsilon = infinite: an answer reveals the truth" in " ".join(table.stdout.split())


def test_a_server_export_is_read_as_it_is(cli, tmp_path: Path) -> None:
    """JSON text per cell; a two-group design's cell holds its group."""
    path = tmp_path / "export.csv"
    rows = ["row,used,copied,year"] + [
        f'{i},{"true" if i % 3 else "false"},"{{""group"":{1 + i % 2},""answer"":{"true" if i % 4 else "false"}}}",'
        f'"""second"""' for i in range(40)
    ]
    path.write_text("\n".join(rows) + "\n")
    used = np.array([i % 3 != 0 for i in range(40)])
    fit = survey.prevalence(used, survey.design("FR", ["1/6", "1/6"]))
    one = json.loads(cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--response", "used", "--json").stdout)
    assert one["prevalence"][0]["estimate"] == pytest.approx(fit.params["pi"], abs=1e-12)
    d = survey.design("UQTunknown", [0.7, 0.3])
    groups = np.array([1 + i % 2 for i in range(40)])
    fit2 = survey.prevalence(np.array([i % 4 != 0 for i in range(40)]), d, group=groups)
    two = json.loads(cli("analyze", path, "--design", "UQTunknown", "--p", "0.7,0.3", "--response", "copied",
                         "--json").stdout)
    assert two["prevalence"][0]["estimate"] == pytest.approx(fit2.params["pi"], abs=1e-12)


def test_nigeria_forced_response_prevalence(cli) -> None:
    """RRreg's RRuni on rr.q1: 0.2619 (SE 0.0144), 2,435 answers (22 missing left out)."""
    record = json.loads(cli("analyze", NIGERIA, "--design", "FR", "--p", "1/6,1/6", "--response", "rr.q1",
                            "--json").stdout)
    (pi,) = record["prevalence"]
    assert (record["n"], record["missing"]) == (2435, 22)
    assert round(pi["estimate"], 4) == 0.2619 and round(pi["std_error"], 4) == 0.0144


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--design", "FRX", "--p", "1/6"], "--design must be one of"),
        (["--design", "FR", "--p", "0.6,0.6"], "--p: p must add up to less than 1"),
        (["--design", "Warner", "--p", "1.5"], "--p: p must be in [0, 1]"),
        (["--design", "UQTknown", "--p", "0.7"], "--p: p must have 2 values"),
        (["--design", "FR", "--p", "1/6,1/6"], "--response: name the column"),
        (["--design", "FR", "--p", "1/6,1/6", "--response", "nope"], "--response: no column 'nope'"),
        (["--design", "FR", "--p", "1/6,1/6", "--response", "age"], "--response: row 1 of column 'age'"),
        (["--design", "SLD", "--p", "0.3,0.7", "--response", "lied"], "--group: SLD is a two-group design"),
        (["--design", "FR", "--p", "1/6,1/6", "--response", "used", "--group", "grp"], "--group: FR has one group"),
        (["--design", "SLD", "--p", "0.3,0.7", "--response", "lied", "--group", "age"], "--group: row 1 is"),
        (["--design", "FR", "--p", "1/6,1/6", "--response", "used", "--level", "2"], "--level must be in (0, 1)"),
    ],
)
def test_errors_are_one_line_naming_the_option(
    cli, tmp_path: Path, rng: np.random.Generator, args: list[str], message: str
) -> None:
    path = tmp_path / "answers.csv"
    _answers_file(path, rng, n=50)
    result = cli("analyze", path, *args)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr, result.stderr


def test_formula(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    """--formula: the table and JSON are survey.logit's on the file (answers decoded as yes/no)."""
    pytest.importorskip("patsy", reason="formulas need the survey extra")
    import pandas as pd

    path = tmp_path / "answers.csv"
    data = _answers_file(path, rng)
    d = survey.design("FR", ["1/6", "1/6"])
    frame = pd.DataFrame({"used": (data["used"] == "yes").astype(int), "age": data["age"]})
    expected = survey.logit("used ~ age", frame, d)
    result = cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--formula", "used ~ age", "--json")
    assert result.exit_code == 0, result.output
    terms = {t["term"]: t for t in json.loads(result.stdout)["regression"]["terms"]}
    assert list(terms) == ["Intercept", "age"]
    for term, t in terms.items():
        assert t["estimate"] == pytest.approx(float(expected.params[term]), abs=1e-9)
        assert t["std_error"] == pytest.approx(float(expected.bse[term]), abs=1e-9)
    table = cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--formula", "used ~ age")
    assert "logistic regression used ~ age: n = 4,000" in table.stdout and "Intercept" in table.stdout
    bad = cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--formula", "used ~ height")
    assert bad.exit_code == 1 and bad.stderr.startswith("error: --formula:"), bad.stderr


def test_nigeria_table_3(cli) -> None:
    """Blair, Imai & Zhou's Table 3 to 3 decimals: intercept -0.340, asset index 0.0790, married -0.267,
    female -0.554; 2,423 complete cases."""
    pytest.importorskip("patsy", reason="formulas need the survey extra")
    formula = ("rr.q1 ~ cov.asset.index + cov.married + I(cov.age/10) + I((cov.age/10)**2) + cov.education"
               " + cov.female")
    record = json.loads(cli("analyze", NIGERIA, "--design", "FR", "--p", "1/6,1/6", "--formula", formula,
                            "--json").stdout)
    terms = {t["term"]: round(t["estimate"], 3) for t in record["regression"]["terms"]}
    assert record["regression"]["n"] == 2423
    assert (terms["Intercept"], terms["cov.asset.index"], terms["cov.married"], terms["cov.female"]) == (
        -0.340, 0.079, -0.267, -0.554)


@pytest.mark.stat
def test_demo_part_two_estimates_the_prevalence_with_a_covariate(cli, tmp_path: Path) -> None:
    """The demo draws from the OS CSPRNG: its prevalence and the two regression terms each within
    z standard errors of the truth at alpha 1e-6 / 3 (1e-6 in all). Power: the raw share of "yes"
    (about 1/6 + 2/3 truth, 9 standard errors off) and a slope of 0 (about 19 off) are rejected."""
    result = cli("demo", "--n", 20_000, "--out", tmp_path / "demo.svg")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "part 2: Study drugs and age" in text and "plain age question (not randomized)" in text
    number = r"([-+]?\d+\.\d+)"
    found = re.search(rf"estimated users: {number} SE {number} 95% interval {number} \.\. {number} \(truth {number}\)",
                      text)
    assert found, text
    estimate, se, truth = float(found[1]), float(found[2]), float(found[5])
    alpha = 1e-6 / 3
    assert (res := estimate_check(estimate, truth, se, alpha)), res.message
    # power: the raw share of "yes" answers a reading without the debias expects (1/6 + 2/3 truth,
    # a number, not a draw) lies outside the same band
    assert abs(1 / 6 + 2 / 3 * truth - truth) > res.critical_value * se
    pytest.importorskip("patsy", reason="the regression needs the survey extra")
    assert "logistic regression of the prevalence on age" in text
    # the regression on age against the truth, the same band, and its power: a model without an
    # age effect (slope 0) is rejected
    for term, truth_value in (("Intercept", -4.2), ("age", 0.15)):
        row = re.search(rf"{term} {number} SE {number} 95% interval", text)
        assert row, text
        assert (res := estimate_check(float(row[1]), truth_value, float(row[2]), alpha, label=term)), res.message
        if term == "age":
            assert not estimate_check(float(row[1]), 0.0, float(row[2]), alpha)


@pytest.mark.parametrize(("design", "group"), [(survey.Warner(p=0.7), ""), (survey.StochasticLieDetector(p=[0.8, 0.3]),
                                                                            " --group GROUP_COLUMN")])
def test_estimate_on_a_design_question_points_to_analyze(cli, tmp_path: Path, design, group: str) -> None:
    """Once a crash (PrevalenceFit got an unexpected keyword argument 'domain'); the command it names runs."""
    data, config = tmp_path / "answers.csv", tmp_path / "design.json"
    data.write_text("answer\n1\n0\n1\n0\n1\n")
    config.write_text(json.dumps(design.to_config()))
    result = cli("estimate", data, "--column", "answer", "--config", config)
    p = ",".join(design.to_config()["params"]["p"])
    command = f"deniable analyze {data} --design {design.model} --p {p} --response answer{group}"
    assert result.exit_code == 1 and f"survey design ({design.model})" in result.stderr
    assert f"`{command}`" in result.stderr.replace("\n", ""), result.stderr
    if not group:
        assert cli(*command.split()[1:]).exit_code == 0
