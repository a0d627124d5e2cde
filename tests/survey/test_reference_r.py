"""deniable.survey against the R packages RRreg 0.7.6 and rr 1.4.2, on numbers they computed.

The reference values were made once with ``Rscript tests/survey/reference/make_reference.R``
(see tests/survey/reference/README.md) and are read from its JSON, so this
suite needs no R. Everything here is deterministic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from reference_values import load

import deniable.survey as sv

REF = load()


def _design(entry: dict[str, Any]) -> sv.Design:
    return sv.design(entry["model"], entry["p"], Kukrep=entry.get("Kukrep", 1))


@pytest.mark.parametrize("entry", [e for e in REF["getPW"] if e["group"] != 0], ids=lambda e: e["call"])
def test_matrix_is_getpw(entry: dict[str, Any]) -> None:
    got = _design(entry).matrix(entry["group"], extra=entry["par2"])
    want = np.array(entry["matrix"], dtype=float)
    if entry["colnames"][:2] == ["1", "0"]:  # RRreg orders CDM's columns carrier, non-carrier, cheater
        want = want[:, [1, 0, 2]]
    np.testing.assert_allclose(got, want, atol=1e-14)


UNI = {k: v for k, v in REF["RRuni"].items()}


@pytest.mark.parametrize("name", [k for k, v in UNI.items() if not v["ml_fallback"]])
def test_moment_estimates_and_ses_are_rruni(name: str) -> None:
    e = UNI[name]
    d = _design(e)
    fit = sv.prevalence(np.array(e["response"]), d, e.get("group") if d.groups == 2 else None)
    m = e["RRuni"]
    assert fit.method == "moment"
    pis = [k for k in fit.params if k.startswith("pi") and k != "piUQ"]
    keep = slice(-1, None) if pis == ["pi"] else slice(None)  # RRuni's FR with 2 categories also gives pi_0
    np.testing.assert_allclose([fit.params[k] for k in pis], m["pi"][keep], rtol=1e-10)
    np.testing.assert_allclose([fit.bse[k] for k in pis], m["piSE"][keep], rtol=1e-10)
    if d.extra is not None:
        assert fit.params[d.extra] == pytest.approx(m[d.extra], rel=1e-10)
        if m.get(f"{d.extra}SE") is not None:
            assert fit.bse[d.extra] == pytest.approx(m[f"{d.extra}SE"], rel=1e-8)
    assert fit.llf == pytest.approx(m["loglik_bernoulli"], rel=1e-10)


@pytest.mark.parametrize("name", [k for k, v in UNI.items() if v["ml_fallback"]])
def test_ml_fallback_finds_the_constrained_mle(name: str) -> None:
    """Where RRuni's fallback breaks (FR: NA; CDM: gamma = -1), deniable finds the constrained MLE."""
    e = UNI[name]
    d = _design(e)
    fit = sv.prevalence(np.array(e["response"]), d, e.get("group") if d.groups == 2 else None)
    best = e["ml_constrained"]
    assert fit.method == "ml"
    assert fit.llf == pytest.approx(best["loglik_bernoulli"], abs=1e-7)
    for k, v in best["params"].items():
        if k in fit.params:
            assert fit.params[k] == pytest.approx(v, abs=2e-4)
    # the moment estimate and its SE as RRuni's first step reports them
    assert fit.bse["pi"] == pytest.approx(e["moment"]["piSE"][0], rel=1e-10)


def _rr_design(args: dict[str, Any]) -> sv.Design:
    if args["design"] == "forced-known":  # p truthful, p1 forced yes, p0 forced no
        return sv.ForcedResponse((args["p0"], args["p1"]))
    if args["design"] == "mirrored":
        return sv.Warner(args["p"])
    assert args["design"] == "unrelated-known"
    return sv.UnrelatedQuestion((args["p"], args["q"]))


POWER = [e for e in REF["power"]["power_rr_test"] if e["args"]["type"] == "one.sample"]


@pytest.mark.parametrize("entry", POWER, ids=lambda e: e["call"])
def test_power_is_rrs_power_rr_test(entry: dict[str, Any]) -> None:
    a = entry["args"]
    alternative = (
        "two-sided" if a["alternative"] == "two.sided" else ("greater" if a["presp"] > a["presp.null"] else "less")
    )
    got = sv.prevalence_power(
        _rr_design(a),
        a["presp"],
        a["n"],
        pi0=a["presp.null"],
        level=1 - a["sig.level"],
        alternative=alternative,
        null_se=True,
    )
    assert got == pytest.approx(entry["power"], rel=1e-9, abs=1e-12)
