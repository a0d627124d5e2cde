"""The Python survey client keeps its state: memoized answers across processes, device keys for rounds.

``Client(url, state=path)`` keeps one survey's :class:`~deniable.client.SurveyState`
(a secret and the device key) in an owner-only file. Checked over real HTTP
on loopback: two separate processes answering with the same state send
the same memoized randomization (dBitFlip and 1BitMean reports have no
fresh part, so they are equal; L-GRR's and L-OSUE's first rounds are); a
state of another survey, or of other questions, is refused; a survey with
``rounds`` needs a state and gets its device key. Until the server knows
``rounds``, the refusals (409 / 403 on field ``device``) are checked against
a stand-in transport; the end-to-end test at the bottom skips unless the
server accepts a survey with ``rounds``.
"""

from __future__ import annotations

import json
import math
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import deniable as dn
from deniable.client import (
    AlreadyAnsweredError,
    BudgetSpentError,
    Client,
    ClientError,
    SurveyState,
    new_device_key,
    privatize_answers,
)
from deniable.errors import StateError
from deniable.server._runner import BackgroundServer

CATEGORIES = [f"c{i}" for i in range(12)]
SURVEY: dict[str, Any] = {
    "id": "daily-use", "title": "Daily use", "budget": 8,
    "questions": [
        {"id": "lgrr", "text": "Most used?", "type": "categorical", "categories": CATEGORIES,
         "mechanism": "l-grr", "epsilon_perm": 3, "epsilon_1": 1},
        {"id": "losue", "text": "Most used?", "type": "categorical", "categories": CATEGORIES,
         "mechanism": "l-osue", "epsilon_perm": 3, "epsilon_1": 1},
        {"id": "dbitflip", "text": "Most used?", "type": "categorical", "categories": CATEGORIES,
         "mechanism": "dbitflip", "epsilon": 1, "d": 6},
        {"id": "ok", "text": "Slept well?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1},
    ],
}
OTHER = {**SURVEY, "id": "other-survey"}
ANSWERS = {"lgrr": "c3", "losue": "c7", "dbitflip": "c5", "ok": True}
KEY = re.compile(r"[A-Za-z0-9_-]{22}")

# one process answering with a kept state: prints its reports and the state's memoized draws
ANSWER_ONCE = """
import json, sys
import deniable as dn
from deniable.client import Client
url, path, answers = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with Client(url, state=path) as client:
    client.respond("daily-use", answers)
    survey = client.survey("daily-use")
    state = client.survey_state("daily-use")
    firsts = {}
    for q in survey["questions"]:
        m = dn.from_config(q["mechanism"])
        if q["id"] in ("lgrr", "losue"):
            firsts[q["id"]] = m.reports_to_json(
                m._public(state.client(q["id"], m).permanent(answers[q["id"]])))[0]
    print(json.dumps({"device": state.device, "firsts": firsts}))
"""


def _in_a_process(url: str, path: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", ANSWER_ONCE, url, str(path), json.dumps(ANSWERS)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return dict(json.loads(out.stdout))


def test_processes_sharing_a_state_reuse_the_memoized_randomization(sqlite_url: str, tmp_path: Path) -> None:
    path = tmp_path / "device.state"
    with BackgroundServer([SURVEY], db_url=sqlite_url) as server:
        first = _in_a_process(server.url, path)
        again = _in_a_process(server.url, path)
        other = _in_a_process(server.url, tmp_path / "another-device.state")
        stored = server.storage.aggregates("daily-use")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first == again  # the same device key and first-round responses in both processes
    assert KEY.fullmatch(first["device"]) and other["device"] != first["device"]
    assert stored["dbitflip"].n == 3


def test_kept_reports_repeat_where_nothing_is_fresh(tmp_path: Path) -> None:
    """dBitFlip and 1BitMean (no fresh part): a kept device sends the same report every time."""
    survey = {
        "id": "kept", "questions": [
            {"id": "d", "mechanism": dn.DBitFlip(CATEGORIES, d=4, epsilon=1.0).to_config()},
            {"id": "m", "mechanism": dn.OneBitMean(0, 100, epsilon=1.0, points=11).to_config()},
            {"id": "g", "mechanism": dn.GRR(CATEGORIES, epsilon=1.0).to_config()},
        ],
    }
    answers = {"d": "c2", "m": 41.5, "g": "c1"}
    path = tmp_path / "s"
    sent = [privatize_answers(survey, answers, state=SurveyState(path, survey)) for _ in range(20)]
    assert all(s["d"] == sent[0]["d"] and s["m"] == sent[0]["m"] for s in sent)
    # GRR does not memoize: its reports are fresh (equal 20 times w.p. below 1e-9)
    assert len({s["g"] for s in sent}) > 1
    m = dn.DBitFlip(CATEGORIES, d=4, epsilon=1.0)
    assert len(m.reports_from_json([s["d"] for s in sent])) == 20
    # without a state every report is fresh: the dBitFlip buckets differ (equal w.p. 1/495 each)
    fresh = {json.dumps(privatize_answers(survey, answers)["d"]) for _ in range(20)}
    assert len(fresh) > 1


def test_a_state_of_another_survey_or_other_questions_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "device.state"
    SurveyState(path, SURVEY)
    with pytest.raises(StateError, match="survey daily-use"):
        SurveyState(path, OTHER)
    changed = json.loads(json.dumps(SURVEY))
    changed["questions"][2]["mechanism"] = "oue"
    with pytest.raises(StateError, match="fingerprint"):
        SurveyState(path, changed)
    reworded = json.loads(json.dumps(SURVEY))
    reworded["questions"][0]["text"] = "Which one did you use most?"
    assert SurveyState(path, reworded).device == SurveyState(path, SURVEY).device  # same configuration
    kept = json.loads(path.read_text())
    assert kept["mechanism"] == "survey daily-use" and KEY.fullmatch(kept["fields"]["device"])
    assert set(kept) == {"format", "version", "mechanism", "fingerprint", "secret", "fields"}
    assert set(kept["fields"]) == {"device"}  # no answer is kept


def test_device_keys_are_128_csprng_bits_in_base64url() -> None:
    keys = {new_device_key() for _ in range(100)}
    assert len(keys) == 100 and all(KEY.fullmatch(k) for k in keys)
    import base64

    assert all(len(base64.urlsafe_b64decode(k + "==")) == 16 for k in keys)


# ------------------------------------------------------------------ rounds (client side)
def _stand_in(rounds_survey: dict[str, Any], refusals: list[tuple[int, str]], sent: list[Any]) -> httpx.MockTransport:
    """What a server with rounds answers (its survey with ``rounds``; the given refusals in turn)."""

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=rounds_survey)
        sent.append(json.loads(request.content))
        if refusals:
            status, message = refusals.pop(0)
            return httpx.Response(status, json={"detail": {"field": "device", "message": message}})
        return httpx.Response(201, json={"status": "accepted", "response_id": "r", "idempotency_key": "k"})

    return httpx.MockTransport(handle)


def _rounds_survey() -> dict[str, Any]:
    from deniable.server._surveys import load_survey

    survey = load_survey(SURVEY).to_json()  # the questions as the server sends them
    return {**survey, "rounds": {"every": 86400, "lifetime_epsilon": 12.0, "start": "2026-11-01T00:00:00Z"},
            "current_round": 22}


def test_a_rounds_survey_gets_the_kept_device_key_and_clear_refusals(tmp_path: Path) -> None:
    survey, sent = _rounds_survey(), []
    refusals = [(409, "this device already answered round 22; the next round starts 2026-11-24T00:00:00Z"),
                (403, "this response would take the device over lifetime_epsilon=12")]
    path = tmp_path / "device.state"
    with Client("http://collector.test", transport=_stand_in(survey, [], sent), state=path) as client:
        client.respond("daily-use", ANSWERS)
    with Client("http://collector.test", transport=_stand_in(survey, refusals, sent), state=path) as client:
        with pytest.raises(AlreadyAnsweredError, match="already answered round 22") as conflict:
            client.respond("daily-use", ANSWERS)
        with pytest.raises(BudgetSpentError, match="lifetime_epsilon") as spent:
            client.respond("daily-use", ANSWERS)
    assert isinstance(conflict.value, ClientError) and conflict.value.status == 409
    assert spent.value.field == "device" and spent.value.status == 403
    devices = {body["device"] for body in sent}
    assert len(sent) == 3 and len(devices) == 1 and KEY.fullmatch(devices.pop())
    with Client("http://collector.test", transport=_stand_in(survey, [], sent)) as client:
        with pytest.raises(ValueError, match="runs in rounds: create the Client with state="):
            client.respond("daily-use", ANSWERS)
    assert len(sent) == 3  # nothing was sent without a device key


def test_batches_to_a_rounds_survey_carry_one_device_key_per_respondent() -> None:
    survey, sent = _rounds_survey(), []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=survey)
        body = json.loads(request.content)
        sent.extend(body["responses"])
        return httpx.Response(200, json={"accepted": len(body["responses"]), "duplicates": 0})

    keys = [new_device_key() for _ in range(5)]
    with Client("http://collector.test", transport=httpx.MockTransport(handle), token="relay") as client:
        assert client.respond_many("daily-use", [ANSWERS] * 5, batch_size=2, devices=keys) == {
            "accepted": 5, "duplicates": 0}
        with pytest.raises(ValueError, match="runs in rounds: pass devices="):
            client.respond_many("daily-use", [ANSWERS] * 5)
        with pytest.raises(ValueError, match="one key per respondent"):
            client.respond_many("daily-use", [ANSWERS] * 5, devices=keys[:4])
    assert [r["device"] for r in sent] == keys
    refused = [(409, "responses[0].device", AlreadyAnsweredError), (403, "responses[1].device", BudgetSpentError),
               (409, "idempotency_key", ClientError)]
    for status, field, kind in refused:
        def deny(request: httpx.Request, status: int = status, field: str = field) -> httpx.Response:
            if request.method == "GET":
                return httpx.Response(200, json=survey)
            return httpx.Response(status, json={"detail": {"field": field, "message": "refused"}})

        with Client("http://collector.test", transport=httpx.MockTransport(deny), token="relay") as client:
            with pytest.raises(ClientError) as error:
                client.respond_many("daily-use", [ANSWERS] * 2, devices=keys[:2])
        assert type(error.value) is kind and error.value.field == field


# ------------------------------------------------------------------ rounds end to end
def wait_for_the_next_round(survey: dict[str, Any]) -> None:
    """Sleep until just after the next round of ``survey`` (as ``GET /surveys/{id}`` gives it) starts."""
    from datetime import datetime

    start = datetime.fromisoformat(survey["rounds"]["start"].replace("Z", "+00:00")).timestamp()
    every = survey["rounds"]["every"]
    now = time.time()
    time.sleep(start + (math.floor((now - start) / every) + 1) * every - now + 0.05)


@pytest.mark.integration
def test_rounds_end_to_end_if_the_server_knows_rounds(sqlite_url: str, tmp_path: Path) -> None:
    """Small and marked: needs a server that takes ``rounds`` (skips otherwise).

    Rounds of two seconds, a lifetime budget of one round's epsilon: the first
    response is taken, a second in the same round is refused (409), and one in
    the next round (403: the budget is spent).
    """
    from deniable.server._surveys import SurveyError, load_survey

    survey = {"id": "every-second", "title": "Every two seconds", "budget": 1,
              "rounds": {"every": 2, "lifetime_epsilon": 1},
              "questions": [{"id": "ok", "text": "OK?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1}]}
    try:
        load_survey(survey)
    except SurveyError as exc:
        pytest.skip(f"this server does not know rounds yet ({exc})")
    with BackgroundServer([survey], db_url=sqlite_url) as server, \
            Client(server.url, state=tmp_path / "device.state") as client:
        definition = client.survey("every-second")
        assert "current_round" in definition
        wait_for_the_next_round(definition)  # so that the first two responses share a round
        client.respond("every-second", {"ok": True})
        with pytest.raises(AlreadyAnsweredError):
            client.respond("every-second", {"ok": True})
        wait_for_the_next_round(definition)
        with pytest.raises(BudgetSpentError, match="lifetime_epsilon"):
            client.respond("every-second", {"ok": True})


def test_a_sampled_survey_answers_the_drawn_question_with_its_kept_client(tmp_path: Path) -> None:
    """allocation: sample draws one question per response; each memoizing one repeats its report."""
    survey = {
        "id": "sampled", "allocation": "sample", "questions": [
            {"id": f"q{i}", "mechanism": dn.DBitFlip(CATEGORIES, d=3, epsilon=1.0).to_config()} for i in range(2)
        ],
    }
    state = SurveyState(tmp_path / "s", survey)
    seen: dict[str, set[str]] = {"q0": set(), "q1": set()}
    for _ in range(40):
        sent = privatize_answers(survey, {"q0": "c1", "q1": "c2"}, state=state)
        (qid,) = sent
        seen[qid].add(json.dumps(sent[qid]))
    assert all(len(reports) == 1 for reports in seen.values())  # both drawn: P(not) = 2 * 2**-40
