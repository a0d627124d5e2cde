"""List experiments: R list's ictreg on its race data (values computed once, tests/survey/reference/
make_list.R), the difference in means, weights, bad input, the privacy statement, and calibration.

Calibration (``stat``): over R = 2000 simulated experiments (n = 1000, J = 3, prevalence 0.3), the
difference in means' 95% interval covers the truth within the two-sided binomial band at alpha =
1e-6 / 2 per check (Bonferroni over the file's two checks); the ML prevalence at the mean covariate
(``predict_mean``) is unbiased within the t band. Power: the raw mean of the treated (no control
subtraction) fails the coverage check.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import deniable.survey as sv
from deniable.survey._list import ListLikelihood
from deniable.testing import coverage_check, z_for
from tests.survey.reference_values import REFERENCE_DIR

RACE = Path(__file__).resolve().parents[2] / "examples" / "data" / "race.csv"
FORMULA = "y ~ south + age + male + college"


@cache
def ref() -> dict[str, Any]:
    with (REFERENCE_DIR / "list.json").open(encoding="utf-8") as handle:
        out: dict[str, Any] = json.load(handle)
    return out


@cache
def race() -> pd.DataFrame:
    return pd.read_csv(RACE)


def test_ictreg_ml_reproduces_r_on_the_race_data() -> None:
    """R's EM stops about 2e-4 short of the maximum (its log-likelihood is 6e-8 lower than deniable's): the
    likelihoods agree exactly at R's estimate, the estimates to 3e-4 and the SEs (R: optim's numerical
    Hessian) to 1e-4."""
    entry = ref()["ml"]
    res = sv.ictreg(FORMULA, race(), "treat", J=3, method="ml")
    r_params = np.r_[entry["sensitive"], entry["control"]]
    assert list(res.params.index[:2]) == ["sensitive:Intercept", "sensitive:south"]
    np.testing.assert_allclose(res.params, r_params, atol=3e-4)
    np.testing.assert_allclose(res.bse, np.r_[entry["sensitive_se"], entry["control_se"]], rtol=1e-4)
    d = race()
    x = np.column_stack([np.ones(len(d)), d[["south", "age", "male", "college"]].to_numpy()])
    lik = ListLikelihood(3, d["y"].to_numpy(), d["treat"].to_numpy().astype(bool), x)
    assert lik.loglike(r_params) == pytest.approx(entry["llik"], abs=1e-9)
    assert entry["llik"] < res.llf < entry["llik"] + 1e-6
    # deniable's estimate is the maximum: Newton decrement g' (-H)^{-1} g of the exact gradient below 1e-10
    theta = res.params.to_numpy()
    g = lik.score(theta)
    assert g @ np.linalg.solve(-lik.hessian(theta), g) < 1e-10


def test_ictreg_predictions_match_predict_ictreg() -> None:
    res = sv.ictreg(FORMULA, race(), "treat", J=3)
    pred = res.predict()
    np.testing.assert_allclose(pred["fit"][:10], ref()["predict"]["fit_first10"], rtol=2e-4)
    np.testing.assert_allclose(pred["se"][:10], ref()["predict"]["se_first10"], rtol=2e-4)
    mean, se, _ = res.predict_mean()
    assert mean == pytest.approx(ref()["predict"]["avg"], rel=1e-4)
    assert se == pytest.approx(ref()["predict"]["avg_se"], rel=1e-4)
    assert res.predict(race().head(3))["fit"].to_numpy() == pytest.approx(pred["fit"][:3].to_numpy())


def test_ictreg_lm_matches_r_exactly() -> None:
    entry = ref()["lm"]
    res = sv.ictreg(FORMULA, race(), "treat", J=3, method="lm")
    np.testing.assert_allclose(res.params, np.r_[entry["sensitive"], entry["control"]], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(res.bse, np.r_[entry["sensitive_se"], entry["control_se"]], rtol=1e-12)


def test_difference_in_means() -> None:
    d = race()
    dif = sv.list_difference("y", "treat", J=3, data=d)
    assert dif.estimate == pytest.approx(ref()["difference"]["lm_estimate"], rel=1e-13)
    assert dif.std_error == pytest.approx(ref()["difference"]["welch_se"], rel=1e-13)
    equal = sv.list_difference("y", "treat", J=3, data=d, weights=np.full(len(d), 2.0))
    assert equal.estimate == pytest.approx(dif.estimate, rel=1e-13)
    n = len(d)  # the linearization's n/(n-1) per list against the sample variances' n_t/(n_t - 1)
    assert equal.std_error == pytest.approx(dif.std_error, rel=2 / n * 10)
    assert "epsilon=inf" in repr(dif) and "reveals the sensitive item" in repr(dif)
    assert dif.to_dict()["epsilon"] is None  # infinity becomes None in JSON


def test_weighted_ictreg_with_equal_weights_keeps_the_fit() -> None:
    d = race()
    plain = sv.ictreg(FORMULA, d, "treat", J=3)
    weighted = sv.ictreg(FORMULA, d, "treat", J=3, weights=np.full(len(d), 3.0), cluster="state")
    np.testing.assert_allclose(weighted.params, plain.params, rtol=1e-7, atol=1e-9)
    assert weighted.cov_type == "linearization" and weighted.design_effect is not None
    lm = sv.ictreg(FORMULA, d, "treat", J=3, method="lm", weights=np.ones(len(d)))
    np.testing.assert_allclose(lm.params, sv.ictreg(FORMULA, d, "treat", J=3, method="lm").params, rtol=1e-12)


def test_privacy_is_stated() -> None:
    exp = sv.ListExperiment(J=4)
    assert exp.epsilon == np.inf
    assert "epsilon infinite" in repr(exp) and "0 or 5 reveals" in repr(exp)
    assert "epsilon=inf" in repr(sv.ictreg(FORMULA, race(), "treat", J=3, method="lm"))


@pytest.mark.parametrize(("y", "treat", "message"), [
    ([0, 1, 5, 2], [1, 1, 1, 0], r"y must be a count of items in 0\.\.4 \(treatment list of J=3 \+ 1 items\); "
                                 r"got 5 at position 2"),
    ([0, 1, 4, 2], [0, 1, 0, 1], r"y must be a count of items in 0\.\.3 \(control list.*got 4 at position 2"),
    ([0, 1, 1.5, 2], [0, 1, 0, 1], r"y must be a count.*got 1\.5 at position 2"),
    ([0, 1, 2, 2], [0, 1, 2, 1], r"treat must be 0 \(control list\) or 1.*got 2 at position 2"),
    ([0, 1, 2, 2], ["a", "b", "a", "b"], r"treat must be 0 .* got 'a' at position 0"),
    ([0, 1, 2], [0, 1, 0, 1], r"y and treat must be 1-D with one entry per respondent"),
])
def test_bad_input_names_the_argument(y: list[Any], treat: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sv.list_difference(np.array(y), np.array(treat), J=3)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"J must be a positive integer"):
        sv.ListExperiment(J=0)
    with pytest.raises(ValueError, match=r"method must be one of 'ml', 'nls', 'lm'"):
        sv.ictreg(FORMULA, race(), "treat", J=3, method="em")
    with pytest.raises(ValueError, match=r"treat must name a column of data"):
        sv.ictreg(FORMULA, race(), "treatment", J=3)
    with pytest.raises(ValueError, match=r"weights must have one entry per respondent"):
        sv.list_difference("y", "treat", J=3, data=race(), weights=np.ones(4))
    with pytest.raises(ValueError, match=r"fpc: not supported for list experiments"):
        sv.list_difference("y", "treat", J=3, data=race(), fpc=np.full(len(race()), 0.1))


def _simulate(rng: np.random.Generator, n: int, replicates: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = rng.normal(size=(replicates, n))
    z = rng.random((replicates, n)) < 1 / (1 + np.exp(-(-0.9 + 0.8 * x)))
    control = rng.binomial(3, 1 / (1 + np.exp(-(0.2 - 0.5 * x))))
    treat = rng.random((replicates, n)) < 0.5
    return control + treat * z, treat, x


@pytest.mark.stat
def test_difference_interval_is_calibrated(rng: np.random.Generator) -> None:
    replicates, n = 2000, 1000
    y, treat, x = _simulate(rng, n, replicates)
    # the prevalence of this population: E logistic(-0.9 + 0.8 x) over x ~ N(0, 1), by quadrature
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    truth = float(weights @ (1 / (1 + np.exp(-(-0.9 + 0.8 * nodes)))) / weights.sum())
    alpha = 1e-6 / 2
    fits = [sv.list_difference(y[r], treat[r].astype(int), J=3) for r in range(replicates)]
    est = np.array([f.estimate for f in fits])
    se = np.array([f.std_error for f in fits])
    check = coverage_check(int(np.sum(np.abs(est - truth) <= z_for(0.05) * se)), replicates, 0.95, alpha)
    assert check, str(check)
    raw = np.array([y[r][treat[r]].mean() for r in range(replicates)])  # no control subtraction
    power = coverage_check(int(np.sum(np.abs(raw - truth) <= z_for(0.05) * se)), replicates, 0.95, alpha)
    assert not power, "the raw treated mean passed"


def test_the_docs_page_runs_and_prints_what_it_says(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "math" / "list-experiments.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    printed = text.split("It prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(root)
    exec(compile(block, "list-experiments.md", "exec"), {})
    assert capsys.readouterr().out == printed


def test_ictreg_nls_reproduces_r_with_smaller_sums_of_squares() -> None:
    """R's nls stops at a relative offset of 1e-5: the two steps' estimates agree to 1e-3 and SEs (the
    two-step sandwich) to 1e-3, and deniable's sums of squares are no larger than R's at either step."""
    entry = ref()["nls"]
    res = sv.ictreg(FORMULA, race(), "treat", J=3, method="nls")
    r_delta, r_psi = np.array(entry["sensitive"]), np.array(entry["control"])
    np.testing.assert_allclose(res.params, np.r_[r_delta, r_psi], rtol=1e-3)
    np.testing.assert_allclose(res.bse, np.r_[entry["sensitive_se"], entry["control_se"]], rtol=1e-3)
    d = race()
    x = np.column_stack([np.ones(len(d)), d[["south", "age", "male", "college"]].to_numpy()])
    y, t = d["y"].to_numpy(), d["treat"].to_numpy().astype(bool)

    def logistic(e: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-e))

    delta, psi = res.params.to_numpy()[:5], res.params.to_numpy()[5:]
    assert np.sum((y[~t] - 3 * logistic(x[~t] @ psi)) ** 2) <= np.sum((y[~t] - 3 * logistic(x[~t] @ r_psi)) ** 2)
    adjusted = y[t] - 3 * logistic(x[t] @ psi)
    assert np.sum((adjusted - logistic(x[t] @ delta)) ** 2) <= np.sum((adjusted - logistic(x[t] @ r_delta)) ** 2)


@pytest.mark.parametrize("method", ["ml", "nls", "lm"])
def test_ictreg_replicates_and_clusters(method: str) -> None:
    """Clustered by state: the JK1 replicates (one state deleted each) and the linearization agree within 35%
    (jackknife SEs are larger with few clusters), and the point estimates are the unweighted ones."""
    d = race()
    psu = pd.factorize(d["state"])[0]
    states = psu.max() + 1
    reps = np.column_stack([np.where(psu == j, 0.0, states / (states - 1)) for j in range(states)])
    plain = sv.ictreg("y ~ south + age", d, "treat", J=3, method=method)
    lin = sv.ictreg("y ~ south + age", d, "treat", J=3, method=method, cluster="state")
    jk = sv.ictreg("y ~ south + age", d, "treat", J=3, method=method, repweights=reps, rep_type="JK1")
    np.testing.assert_allclose(lin.params, plain.params, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(lin.bse / jk.bse, 1.0, atol=0.35)
    assert lin.cov_type == "cluster" or lin.cov_type == "linearization"


def test_ict_test_reproduces_r() -> None:
    """ict.test(gms = FALSE) on the race data: the Bonferroni p-value, and the respondent types' shares (R
    prints them rounded to 4 digits)."""
    entry = ref()["ict_test"]
    d = race()
    result = sv.ict_test(d["y"].to_numpy(), d["treat"].to_numpy(), J=3)
    assert result.pvalue == pytest.approx(entry["p"], rel=1e-9)
    rows = [(y, 1) for y in range(4)] + [(y, 0) for y in range(4)]
    for key, (estimate, se) in zip(rows, entry["pi_table_rounded"], strict=True):
        assert result.table[key][0] == pytest.approx(estimate, abs=5e-5)
        assert result.table[key][1] == pytest.approx(se, abs=5e-5)
    assert "no evidence of a design effect" in repr(result)


@pytest.mark.stat
def test_ict_test_holds_its_level_and_finds_a_design_effect(rng: np.random.Generator) -> None:
    """Under no design effect the test rejects at 5% no more often than 5% (Bonferroni and the boundary make it
    conservative): one-sided binomial check at alpha 1e-6 / 2 over R = 400 experiments. Power: when the
    sensitive item makes treated respondents drop a control item (a design effect), it rejects in most."""
    replicates, n = 400, 2000
    y, treat, _ = _simulate(rng, n, replicates)
    rejections = sum(sv.ict_test(y[r], treat[r].astype(int), J=3).pvalue < 0.05 for r in range(replicates))
    check = coverage_check(replicates - rejections, replicates, 0.95, 1e-6 / 2, conservative=True)
    assert check, str(check)
    # a design effect: treated carriers of the sensitive item stop counting one control item they hold
    drop = treat & (y >= 2) & (rng.random(y.shape) < 0.5)
    effect = sum(sv.ict_test(y[r] - drop[r], treat[r].astype(int), J=3).pvalue < 0.05 for r in range(100))
    assert effect > 50, f"rejected only {effect} of 100 experiments with a design effect"


def test_ictreg_reads_r_formulas() -> None:
    d = race()
    dotted = sv.ictreg("y ~ .", d.drop(columns="state"), "treat", J=3, method="lm")
    assert [n.split(":", 1)[1] for n in dotted.params.index[:5]] == ["Intercept", "age", "south", "male", "college"]
    scaled = sv.ictreg("y ~ scale(age) + factor(south)", d, "treat", J=3, method="lm")
    assert "sensitive:C(south)[T.1]" in scaled.params.index
