"""``deniable estimate`` and ``deniable analyze`` read survey platforms' exports of embed reports.

Each platform's CSV export (Qualtrics with its three header rows, LimeSurvey,
REDCap, oTree; tests/platform_exports.py writes them as the platforms document
them) holds, in one column, the text deniable-embed.js writes in local mode.
The reports come from the embed itself (the classic build under node, on
crypto.getRandomValues) or, without node, from Python's mechanism with the
same field text (``deniable.wire.to_field``).

Calibrated: a frequency estimate must lie in the exact band of its support
count (tests/js/support_bands.py: a sum of two binomials), a design's
prevalence within z standard errors of the truth (``estimate_check``, normal
approximation of the MLE at n = 2000). This file spends alpha = 1e-6 in all,
split evenly (Bonferroni) over its ``N_CALIBRATED`` calibrated assertions
(each splits its share again over the categories); each has a power check: the
same band rejects a wrong truth (the categories rotated; the prevalence 0.1
off), which an estimate without the debias step would also fail.

Exact: every row's fingerprint is checked (a row randomized with another
configuration is refused, naming the row); empty rows are left out and
counted; a Qualtrics question text spanning lines does not shift the rows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_exports import PLATFORMS, column_name, write_export

import deniable as dn
from deniable import survey
from deniable.testing import estimate_check
from deniable.wire import to_field

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import ROOT, run_node  # noqa: E402
from support_bands import outside_bands  # noqa: E402

N = 2000
EMPTY = 7  # rows without a report (respondents who left before the question)
GRR = dn.GRR(["WhatsApp", "Signal", "Telegram", "Other"], epsilon=1.5)
SHARES = [0.5, 0.3, 0.15, 0.05]
OLH = dn.OLH(6, epsilon=2.5)  # reports {"seed", "value"}: the seed travels as a decimal string (wire version 2)
OLH_SHARES = [0.4, 0.3, 0.1, 0.1, 0.05, 0.05]
FR = survey.design("FR", ["1/6", "1/6"])
SLD = survey.design("SLD", ["3/10", "7/10"])
PREVALENCE = 0.3
SOURCES = ["python", pytest.param("embed", marks=pytest.mark.browser)]
N_CALIBRATED = 3 * len(PLATFORMS) * 2  # estimate (GRR, OLH) and analyze, per platform and source
ALPHA_EACH = 1e-6 / N_CALIBRATED
FIELD = "deniable_report"


def _counts(shares: list[float]) -> np.ndarray:
    counts = np.round(np.asarray(shares) * N).astype(int)
    counts[0] += N - counts.sum()
    return counts


def _fields(m: Any, values: list[Any], source: str, rng: np.random.Generator) -> list[str]:
    """The field texts of ``values``' reports: from deniable-embed.js under node, or from Python."""
    if source == "embed":
        config = json.dumps(m.to_config())
        return run_node(ROOT / "tests" / "js" / "embed_fields.mjs", {"config": config, "values": values})
    if getattr(m, "groups", 1) == 1:  # a frequency oracle or a one-group design
        reports = m.reports_to_json(m.privatize_many(values, rng=rng), wire_version=2)
    else:  # a two-group design: each device draws its group, and the report carries it
        groups = rng.integers(1, 3, len(values))
        answers = m.privatize_many(np.asarray(values), group=groups, rng=rng)
        reports = [{"group": int(g), "answer": bool(a)} for g, a in zip(groups, answers, strict=True)]
    return [to_field(m, r) for r in reports]


def _export(platform: str, path: Path, texts: list[str], rng: np.random.Generator) -> None:
    """The texts in the platform's export, shuffled, with EMPTY empty rows among them and a covariate."""
    cells: list[Any] = [*texts, *([None] * EMPTY)]
    order = rng.permutation(len(cells))
    write_export(platform, path, {"age": [str(20 + i % 30) for i in range(len(cells))],
                                  FIELD: [cells[i] for i in order]})


@pytest.mark.parametrize(("m", "shares"), [(GRR, SHARES), (OLH, OLH_SHARES)], ids=["grr", "olh"])
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_estimate_reads_the_export(cli, tmp_path: Path, rng: np.random.Generator, platform: str, source: str,
                                   m: Any, shares: list[float]) -> None:
    counts = _counts(shares)
    values = [v for v, c in zip(m.domain, counts, strict=True) for _ in range(c)]
    path = tmp_path / f"{platform}.csv"
    _export(platform, path, _fields(m, values, source, rng), rng)
    config = tmp_path / "mechanism.json"
    config.write_text(json.dumps(m.to_config()))
    result = cli("estimate", path, "--column", column_name(platform, FIELD), "--config", config, "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["n"] == N
    assert f"{EMPTY} row(s)" in result.stderr and platform in result.stderr
    freqs = [row["estimate"] for row in record["categories"]]
    assert outside_bands(m, counts, freqs, ALPHA_EACH) == []
    assert outside_bands(m, np.roll(counts, 1), freqs, ALPHA_EACH) != []  # power: a wrong truth


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_analyze_reads_the_export(cli, tmp_path: Path, rng: np.random.Generator, platform: str, source: str) -> None:
    truth = [bool(t) for t in rng.random(N) < PREVALENCE]
    path = tmp_path / f"{platform}.csv"
    _export(platform, path, _fields(FR, truth, source, rng), rng)
    result = cli("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--response",
                 column_name(platform, FIELD), "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["n"] == N and record["missing"] == EMPTY
    (row,) = record["prevalence"]
    assert (res := estimate_check(row["estimate"], np.mean(truth), row["std_error"], ALPHA_EACH)), res.message
    assert not estimate_check(row["estimate"], np.mean(truth) + 0.2, row["std_error"], ALPHA_EACH)  # power


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_two_group_design_takes_its_groups_from_the_reports(cli, tmp_path: Path, rng: np.random.Generator,
                                                              platform: str, source: str) -> None:
    """The exact prevalence fit of the reports themselves (group and answer from each report)."""
    truth = [bool(t) for t in rng.random(400) < PREVALENCE]
    texts = _fields(SLD, truth, source, rng)
    path = tmp_path / f"{platform}.csv"
    _export(platform, path, texts, rng)
    result = cli("analyze", path, "--design", "SLD", "--p", "3/10,7/10", "--response",
                 column_name(platform, FIELD), "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    reports = [json.loads(t)["report"] for t in texts]
    fit = survey.prevalence(np.array([int(r["answer"]) for r in reports]), SLD,
                            group=np.array([r["group"] for r in reports]))
    assert record["n"] == 400 and {g["parameter"]: g["estimate"] for g in record["prevalence"]} == pytest.approx(
        dict(fit.params), rel=1e-9)
    assert {r["group"] for r in reports} == {1, 2}  # P(400 uniform groups agree) = 2^-399


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_row_of_another_configuration_is_refused(cli, tmp_path: Path, rng: np.random.Generator,
                                                   platform: str) -> None:
    other = dn.GRR(GRR.domain, epsilon=1.0)
    texts = [to_field(GRR, r) for r in GRR.reports_to_json(GRR.privatize_many(["Signal"] * 5, rng=rng))]
    texts[3] = to_field(other, "Signal")
    path = tmp_path / f"{platform}.csv"
    write_export(platform, path, {FIELD: texts})
    config = tmp_path / "mechanism.json"
    config.write_text(json.dumps(GRR.to_config()))
    result = cli("estimate", path, "--column", column_name(platform, FIELD), "--config", config)
    assert result.exit_code != 0
    assert "row 4" in result.output and other.fingerprint in result.output and GRR.fingerprint in result.output
    # the design's fingerprint, for analyze
    design_texts = [to_field(survey.design("FR", ["1/6", "1/6"]), True)] * 3
    write_export(platform, path, {FIELD: design_texts})
    result = cli("analyze", path, "--design", "FR", "--p", "1/5,1/5", "--response", column_name(platform, FIELD))
    assert result.exit_code != 0 and "row 1" in result.output and "fingerprint" in result.output


def test_limesurvey_semicolons_and_a_text_that_is_not_a_report(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "limesurvey.csv"
    texts = [to_field(GRR, r) for r in GRR.reports_to_json(GRR.privatize_many(["Other"] * 40, rng=rng))]
    write_export("limesurvey", path, {FIELD: texts}, sep=";")
    config = tmp_path / "mechanism.json"
    config.write_text(json.dumps(GRR.to_config()))
    result = cli("estimate", path, "--column", FIELD, "--config", config, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n"] == 40
    write_export("limesurvey", path, {FIELD: [*texts[:2], "Signal"]})
    result = cli("estimate", path, "--column", FIELD, "--config", config)
    assert result.exit_code != 0 and "row 3" in result.output and "deniable-embed" in result.output


def test_the_otree_column_is_named_with_a_hint(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "otree.csv"
    write_export("otree", path, {FIELD: [to_field(GRR, "Signal")] * 3})
    config = tmp_path / "mechanism.json"
    config.write_text(json.dumps(GRR.to_config()))
    result = cli("estimate", path, "--column", FIELD, "--config", config)
    assert result.exit_code != 0 and column_name("otree", FIELD) in result.output
