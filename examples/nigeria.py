"""Blair, Imai & Zhou (2015), Table 3: logistic regression of a forced-response answer on covariates.

Run from the repository root (needs the survey extra: pip install 'deniable[survey]'):

    python examples/nigeria.py

Design: forced response, 1/6 forced "no" and 1/6 forced "yes" (RRreg's FR with
p = (1/6, 1/6)). The published table (rr's rrreg) reports the outer product
of scores standard errors (cov_type="opg"); the exact observed information is
the default.
"""

from pathlib import Path

import pandas as pd

import deniable.survey as sv

data = pd.read_csv(Path(__file__).parent / "data" / "nigeria.csv")
design = sv.design("FR", p=["1/6", "1/6"])
formula = "rr.q1 ~ cov.asset.index + cov.married + I(cov.age/10) + I((cov.age/10)^2) + cov.education + cov.female"

table3 = sv.logit(formula, data, design, cov_type="opg")
print(table3.summary())

observed = sv.logit(formula, data, design)
print("\nStandard errors: outer product of scores (as published) and observed information")
print(pd.DataFrame({"coef": table3.params, "se (opg)": table3.bse, "se (observed)": observed.bse}).round(4))

# nested models must use the same rows: those complete in the larger model's columns
used = ["rr.q1", "cov.asset.index", "cov.married", "cov.age", "cov.education", "cov.female"]
complete = data.dropna(subset=used)
women = sv.logit("rr.q1 ~ cov.female", complete, design)
full = sv.logit(formula, complete, design)
test = full.lr_test(women)
print(f"\nLikelihood-ratio test of the other covariates: chi2 = {test.statistic:.3f}, df = {test.df}, "
      f"p = {test.pvalue:.3f}")
