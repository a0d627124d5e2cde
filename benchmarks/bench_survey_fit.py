"""Survey regression speed: ``deniable.survey.logit`` next to statsmodels' plain ``Logit``.

Targets (issue "Performance at scale", item 4): the randomized-response
logit on a forced-response design (p = (1/6, 1/6)) with 3 covariates at
n = 10^6 within 2x of statsmodels' ``Logit`` fitted to the same answers and
the same design matrix; the two-group fit (CDM, p = (0.2, 0.6), 3
covariates) at n = 200,000 under 5 CPU-seconds, also where no respondent
cheats, so that the fitted gamma sits on its bound and the restarts run.

Times are CPU seconds of this process (``time.process_time``: all threads,
so a multithreaded BLAS counts every core it uses), the median of
``--repeat`` runs. Each deniable fit includes its formula handling (patsy),
as a user calls it; the statsmodels reference gets the finished matrix.

    python benchmarks/bench_survey_fit.py            # full sizes (about a minute)
    python benchmarks/bench_survey_fit.py --quick    # n / 100, one run: a smoke run
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import deniable.survey as sv

try:
    import pandas as pd
    import statsmodels.api as sm
except ImportError:  # the survey extra (pandas, statsmodels, patsy) is what the fits need
    pd = sm = None

BETA = np.array([-0.8, 0.5, -0.4, 0.3])
GAMMA = 0.1


def cpu_seconds(fn: Callable[[], object], repeat: int) -> float:
    """Median CPU seconds of ``fn`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def draw(design: sv.Design, n: int, seed: int, gamma: float = GAMMA) -> Any:
    """``n`` respondents: covariates ``x1..x3 ~ N(0, 1)``, a logistic state, answers from the design's device
    (CDM: cheaters, with probability ``gamma``, say "no"; groups 1 and 2 at random)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    eta = BETA[0] + x @ BETA[1:]
    carrier = rng.random(n) < 1 / (1 + np.exp(-eta))
    groups = rng.integers(1, 3, n) if design.groups == 2 else None
    y = np.asarray(design.privatize_many(carrier, groups, rng=rng)).astype(np.int64)
    if design.model == "CDM":
        y[rng.random(n) < gamma] = 0
    frame = pd.DataFrame(x, columns=["x1", "x2", "x3"])
    frame["y"] = y
    if groups is not None:
        frame["g"] = groups
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n / 100 and one run, for a smoke run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    args = parser.parse_args()
    if sm is None:
        print("skipped: the survey extra (pandas, statsmodels, patsy) is not installed")
        return
    scale, repeat = (100, 1) if args.quick else (1, args.repeat)
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}; CPU seconds, "
          f"median of {repeat}")
    formula = "y ~ x1 + x2 + x3"

    fr = sv.design("FR", ("1/6", "1/6"))
    n = 1_000_000 // scale
    frame = draw(fr, n, 0)
    exog = sm.add_constant(frame[["x1", "x2", "x3"]].to_numpy())
    reference = cpu_seconds(lambda: sm.Logit(frame["y"].to_numpy(), exog).fit(disp=0), repeat)
    ours = cpu_seconds(lambda: sv.logit(formula, frame, fr), repeat)
    bare = cpu_seconds(lambda: sv.logit(formula, frame, fr, restarts=0), repeat)
    print(f"\nFR (1/6, 1/6), 3 covariates, n = {n:,}")
    print(f"  statsmodels Logit (same matrix)   {reference:8.2f} s")
    print(f"  deniable logit                    {ours:8.2f} s   ratio {ours / reference:5.2f}   (goal <= 2)")
    print(f"  deniable logit, restarts=0        {bare:8.2f} s   ratio {bare / reference:5.2f}")

    cdm = sv.design("CDM", (0.2, 0.6))
    n = 200_000 // scale
    frame = draw(cdm, n, 1)
    two = cpu_seconds(lambda: sv.logit(formula, frame, cdm, group="g"), repeat)
    print(f"\nCDM (0.2, 0.6), two groups, 3 covariates, n = {n:,}")
    print(f"  deniable logit                    {two:8.2f} s   (goal < 5 s)")
    frame = draw(cdm, n, 2, gamma=0.0)
    res = sv.logit(formula, frame, cdm, group="g")
    bound = cpu_seconds(lambda: sv.logit(formula, frame, cdm, group="g"), repeat)
    print(f"  the same without cheaters         {bound:8.2f} s   (gamma = {float(res.params.iloc[-1]):g} on its bound: "
          "the restarts run)")


if __name__ == "__main__":
    main()
