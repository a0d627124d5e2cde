"""Power to detect a regression coefficient, by simulation (as RRreg's ``RRsimu`` and rr's power analysis).

For each of ``replicates`` simulated studies: draw the covariates of ``n``
respondents, their true states ``Bernoulli(logistic(x' beta))``, their
answers through the design's device path (compliant respondents; a
two-group design's group drawn uniformly), then fit
:func:`~deniable.survey.logit` with and without ``term`` and reject when the
likelihood-ratio test's p-value is below ``1 - level``. The power is the
share of rejections; its Monte Carlo standard error is
``sqrt(power (1 - power) / replicates)``. Needs the ``survey`` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from deniable.survey._designs import Design

__all__ = ["SimulatedPower", "logit_power"]


class SimulatedPower(NamedTuple):
    """The simulated power, its Monte Carlo standard error and the number of replicates."""

    power: float
    mc_se: float
    replicates: int


def logit_power(
    design: Design,
    coefficients: Mapping[str, float],
    covariates: Callable[[int, np.random.Generator], Any],
    n: int,
    term: str,
    *,
    level: float = 0.95,
    replicates: int = 200,
    rng: int | np.random.Generator | None = None,
) -> SimulatedPower:
    """Power of the likelihood-ratio test of ``term`` in ``answer ~ covariates`` with ``n`` respondents.

    ``coefficients`` maps ``"Intercept"`` and each covariate column to its true
    log-odds coefficient; ``covariates(n, rng)`` returns a DataFrame with
    those columns (a study's respondents). ``rng``: a seed or Generator
    (simulation only).

    >>> import pandas as pd
    >>> from deniable.survey import Warner
    >>> draw = lambda n, rng: pd.DataFrame({"x": rng.standard_normal(n)})
    >>> res = logit_power(Warner(0.8), {"Intercept": -0.85, "x": 0.0}, draw, 300, "x", replicates=20, rng=1)
    >>> res.replicates
    20
    """
    from deniable.survey._regression import logit, lr_test

    names = [k for k in coefficients if k != "Intercept"]
    if term not in names:
        raise ValueError(f"term must be one of the covariates {names}; got {term!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ValueError(f"replicates must be a positive integer; got {replicates!r}")
    gen = np.random.default_rng(rng)
    full = "answer ~ " + " + ".join(names)
    restricted = "answer ~ " + (" + ".join(k for k in names if k != term) or "1")
    rejected = 0
    for _ in range(replicates):
        data = covariates(n, gen)
        missing = [k for k in names if k not in data]
        if missing:
            raise ValueError(f"covariates(n, rng) must return the columns {names}; missing {missing}")
        eta = coefficients.get("Intercept", 0.0) + sum(coefficients[k] * np.asarray(data[k], float) for k in names)
        truth = gen.random(n) < 1 / (1 + np.exp(-eta))
        group = None if design.groups == 1 else gen.integers(1, 3, n)
        data = data.assign(answer=design.privatize_many(truth, group, rng=gen).astype(int))
        fits = [logit(f, data, design, group, restarts=0) for f in (full, restricted)]
        rejected += lr_test(*fits).pvalue < 1 - level
    power = rejected / replicates
    return SimulatedPower(power, float(np.sqrt(power * (1 - power) / replicates)), replicates)
