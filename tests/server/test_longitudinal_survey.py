"""The longitudinal mechanisms over real HTTP: a survey with L-GRR, L-OSUE and dBitFlip questions.

3,000 respondents answer through ``Client.respond_many`` (Python devices:
these mechanisms are not in the browser client); the server stores their
reports, and its results for these respondents must be within ``z`` standard
errors of their true shares, ``z = Phi^-1(1 - 1e-6 / (2 * 12))`` (Bonferroni
over the 12 categories checked), and the stored aggregates must be what the
mechanisms compute from the same configuration.
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.client import Client
from deniable.server._runner import BackgroundServer
from deniable.testing import estimate_check

N = 3000
ADMIN = "longitudinal-admin-token"
PLACES = ["home", "work", "travel", "other"]
SURVEY = {
    "id": "whereabouts", "title": "Where are you today?", "budget": 5,
    "questions": [
        {"id": "lgrr", "text": "Where?", "type": "categorical", "categories": PLACES,
         "mechanism": "l-grr", "epsilon_perm": 4, "epsilon_1": 2},
        {"id": "losue", "text": "Where?", "type": "categorical", "categories": PLACES,
         "mechanism": "l-osue", "epsilon_perm": 4, "epsilon_1": 1},
        {"id": "dbitflip", "text": "Where?", "type": "categorical", "categories": PLACES,
         "mechanism": "dbitflip", "epsilon": 2, "d": 2},
    ],
}


@pytest.mark.stat
def test_longitudinal_questions_travel_through_the_service(sqlite_url: str, rng: np.random.Generator) -> None:
    places = rng.choice(len(PLACES), N, p=[0.4, 0.3, 0.2, 0.1])
    answers = [{q["id"]: PLACES[p] for q in SURVEY["questions"]} for p in places]
    with BackgroundServer([SURVEY], db_url=sqlite_url, admin_token=ADMIN) as server:
        client = Client(server.url, token=ADMIN)  # batches to an open survey come from a trusted relay
        survey = client.survey("whereabouts")
        kinds = {q["id"]: dn.from_config(q["mechanism"]) for q in survey["questions"]}
        assert {type(m) for m in kinds.values()} == {dn.LGRR, dn.LOSUE, dn.DBitFlip}
        assert client.respond_many("whereabouts", answers, batch_size=1000, rng=rng) == {
            "accepted": N, "duplicates": 0,
        }
        results = client.results("whereabouts", target="respondents")
        stored = server.storage.aggregates("whereabouts")
    truth = np.bincount(places, minlength=len(PLACES)) / N
    for q in results["questions"]:
        m = kinds[q["id"]]
        assert q["n"] == N
        est = m.estimate_from(stored[q["id"]], target="respondents")
        np.testing.assert_allclose(q["estimate"], est.frequencies, rtol=1e-9)
        res = estimate_check(q["estimate"], truth, q["std_error"], 1e-6 / len(results["questions"]), label=q["id"])
        assert res, res.message
