"""Write glmer_data.csv, the simulated data of make_glmer.R (run from the repository root).

30 schools of 20 to 60 respondents; ``x`` normal, ``z`` 0/1; the true state
``Bernoulli(logistic(-0.7 + 0.8 x - 0.5 z + b0 + b1 x))`` with ``(b0, b1)`` normal, SDs 1 and 0.5,
correlation 0.3, per school; ``y_dq`` the truth, ``y_warner`` a Warner answer (p = 0.8) and ``y_fr``
a forced-response answer (P(forced no) = 0.1, P(forced yes) = 0.15), drawn by the designs' devices.

    python tests/survey/reference/make_glmer_data.py
"""

import numpy as np
import pandas as pd

import deniable as dn

rng = np.random.default_rng(20261127)
J = 30
sizes = rng.integers(20, 61, J)
school = np.repeat(np.arange(1, J + 1), sizes)
n = school.size
x = np.round(rng.normal(size=n), 4)
z = rng.integers(0, 2, n)
cov = np.array([[1.0, 0.3 * 0.5], [0.3 * 0.5, 0.25]])
b = rng.multivariate_normal([0, 0], cov, size=J)
eta = -0.7 + 0.8 * x - 0.5 * z + b[school - 1, 0] + b[school - 1, 1] * x
truth = rng.random(n) < 1 / (1 + np.exp(-eta))
df = pd.DataFrame({"school": school, "x": x, "z": z, "truth": truth.astype(int)})
df["y_dq"] = df["truth"]
df["y_warner"] = dn.survey.Warner(p=0.8).privatize_many(truth, rng=rng).astype(int)
df["y_fr"] = dn.survey.design("FR", p=[0.1, 0.15]).privatize_many(truth, rng=rng).astype(int)
df.to_csv("tests/survey/reference/glmer_data.csv", index=False)
