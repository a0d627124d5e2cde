"""The whole journey over real HTTP: survey out, privatized reports in, estimates back.

20,000 simulated respondents (a fixed population drawn from the seeded
``rng``) answer the messaging survey through ``Client.respond_many``; the
server stores the reports and its results must cover the population's true
shares.

Calibration: each estimate's error is compared with its reported standard
error (formula (A), the fixed-population variance). With 10 categories
checked at once, the bound ``z = Phi^-1(1 - alpha / 20)`` with ``alpha = 1e-6``
(Bonferroni) makes a correct implementation fail with probability below
1e-6 per backend (normal approximation, n = 20,000). Power: decoding the same
stored counts with a wrong mechanism parameter must break the bound: Warner's
design read with p = 0.85 instead of 0.75 moves the encrypted share by 11.5
standard errors, subset selection read at epsilon 2 instead of 1 moves
WhatsApp's by 14.6, against z = 5.3 (misses below 1e-15; at epsilon 1.5 it
moved 7.7, a miss in 100).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable.client import Client
from deniable.server._runner import BackgroundServer
from deniable.testing import estimate_check

ALPHA = 1e-6
N = 20_000
APP_SHARES = [0.30, 0.20, 0.12, 0.10, 0.10, 0.08, 0.06, 0.04]
ENCRYPTED_SHARE = 0.3
ADMIN = "admin-token-journey"


@pytest.mark.stat
def test_journey_results_cover_the_truth(
    db_url: str, examples: Path, rng: np.random.Generator
) -> None:
    with BackgroundServer([examples / "messaging.yaml"], db_url=db_url, admin_token=ADMIN) as server:
        client = Client(server.url, token=ADMIN)  # batches to an open survey: a trusted relay
        survey = client.survey("messaging")
        categories = survey["questions"][0]["categories"]
        apps = rng.choice(len(categories), N, p=APP_SHARES)
        encrypted = rng.random(N) < ENCRYPTED_SHARE
        answers = [{"app": categories[a], "encrypted": bool(e)} for a, e in zip(apps, encrypted, strict=True)]
        assert client.respond_many("messaging", answers, batch_size=2500, rng=rng) == {
            "accepted": N, "duplicates": 0,
        }
        results = client.results("messaging", target="respondents")  # the truth: these answers
        stored = server.storage.aggregates("messaging")
        assert server.storage.count_responses("messaging") == N

    truth = {
        "app": np.bincount(apps, minlength=len(categories)) / N,
        "encrypted": np.array([1 - encrypted.mean(), encrypted.mean()]),
    }
    assert results["n_responses"] == N and results["target"] == "respondents"
    per_question = [(q["estimate"], truth[q["id"]], q["std_error"]) for q in results["questions"]]
    estimates, truths, errors = (np.concatenate(part) for part in zip(*per_question, strict=True))
    assert (res := estimate_check(estimates, truths, errors, ALPHA)), res.message  # 10 categories at once
    for q in results["questions"]:
        assert q["n"] == N
        se = np.array(q["std_error"])
        low, high = np.array(q["ci_low"]), np.array(q["ci_high"])
        np.testing.assert_allclose(high - low, 2 * stats.norm.isf(0.025) * se, rtol=1e-9)
        consistent = np.array(q["consistent"])
        assert consistent.min() >= 0 and consistent.sum() == pytest.approx(1.0)
        assert sum(q["observed"]) > 0

    # power: the same stored counts decoded with a wrong parameter break the bound
    wrong_binary = dn.BinaryRR(prob=0.85)
    wrong_subset = dn.SubsetSelection(categories, epsilon=2.0, omega=2)
    for qid, wrong in (("encrypted", wrong_binary), ("app", wrong_subset)):
        counts = stored[qid]
        est = wrong.estimate_from(dn.SupportCounts(wrong.fingerprint, counts.counts, counts.n),
                                  target="respondents")
        assert not estimate_check(est.frequencies, truth[qid], est.std_errors, ALPHA * est.frequencies.size / 10), qid


def test_one_respondent_through_the_secure_path(sqlite_url: str, examples: Path) -> None:
    """``respond`` privatizes with the OS CSPRNG and the server counts the report."""
    with BackgroundServer([examples / "honor-code.yaml"], db_url=sqlite_url) as server:
        with Client(server.url) as client:
            answer = client.respond("honor-code", {"violated": False})
            assert answer["status"] == "accepted" and answer["response_id"]
            assert client.results("honor-code")["questions"][0]["n"] == 1
