"""Build ``client_state.json``: a device's kept states and what they derive, made by the Python code.

Run from the repository root (it rewrites the checked-in file; ``--check``
only compares)::

    python tests/vectors/make_client_state.py [--check]

One state format and one derivation serve Python (:mod:`deniable._client_state`,
``deniable.client.SurveyState``, the mechanisms' ``client``) and the browser
(``static/client_state.js``), so a state can move between them. From fixed
secrets the file records, and both test suites check (``tests/unit/test_client_state_vectors.py``
and ``tests/js/client_state.test.mjs``):

* ``streams``: the first bytes of ``ClientState.source(*label)``;
* ``canonical``: values as ``json.dumps(sort_keys=True, separators=(",", ":"))`` writes them
  (what fingerprints hash);
* ``survey``: a survey's state (``SurveyState``: fingerprint, device key), each memoizing
  question's derived secret and cohort, and its kept client's memoized draws;
* ``mechanisms``: per-configuration states (``m.client(state=...)``) and their memoized draws.

A memoized draw is written as the browser's ``permanent(value)`` shows it: RAPPOR's permanent
response (an integer, as text), L-GRR's category, L-OSUE's bits (hex), dBitFlip's slot bits
("0110") and 1BitMean's bit ("0" / "1").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import deniable as dn
from deniable import _client_state as client_state
from deniable.client import SurveyState, survey_fingerprint

OUT = Path(__file__).with_name("client_state.json")
SECRET = bytes(range(32))
DEVICE = "AAECAwQFBgcICQoLDA0ODw"


def mechanisms() -> dict[str, Any]:
    """One configuration of each memoizing mechanism, with the values its draws are recorded for."""
    return {
        "rappor": (
            dn.RAPPOR(["tea", "coffee", "maté"], epsilon=2.0, num_bits=80, num_cohorts=8), ["tea", "coffee", "maté"]
        ),
        "rappor-int": (dn.RAPPOR([3, 7, 11], f=0.5, p=0.0, q=1.0, num_bits=16, num_cohorts=4), [3, 7, 11]),
        "l-grr": (dn.LGRR(["a", "b", "c", "d"], epsilon_perm=2.0, epsilon_1=1.0), ["a", "b", "c", "d"]),
        "l-osue": (dn.LOSUE(list(range(13)), epsilon_perm=2.0, epsilon_1=1.0), [0, 5, 12]),
        "dbitflip": (dn.DBitFlip(10, d=3, epsilon=1.0, gamma=0.1), list(range(10))),
        "one-bit-mean": (dn.OneBitMean(0, 10, epsilon=1.0, points=5), [0.0, 2.5, 3.7, 10.0]),
    }


def shown(m: Any, client: Any, value: Any) -> Any:
    """The memoized draw of ``value`` as the browser's ``permanent(value)`` shows it."""
    if isinstance(m, dn.RAPPOR):
        return str(client.permanent(value))
    if isinstance(m, dn.LGRR):
        return m.domain[int(client.permanent(value)[0])]
    if isinstance(m, dn.LOSUE):
        return bytes(client.permanent(value)[0]).hex()
    if isinstance(m, dn.DBitFlip):
        slot = client.slot(value)
        truth = np.array([client.buckets[slot] if slot < m.d else -1], dtype=np.int64)
        bits = m._answers(client.buckets[None, :], truth, client._stream(f"slot {slot}"))[0]
        return "".join(str(int(b)) for b in bits)
    return str(client.bit(client.point(value)))


def extra(m: Any, client: Any) -> dict[str, Any]:
    """What a client draws once for life besides its secret: RAPPOR's cohort, dBitFlip's buckets."""
    if isinstance(m, dn.RAPPOR):
        return {"cohort": client.cohort}
    if isinstance(m, dn.DBitFlip):
        return {"buckets": [int(b) for b in client.buckets]}
    return {}


def draws(m: Any, client: Any, values: list[Any]) -> list[dict[str, Any]]:
    return [{"value": v, "permanent": shown(m, client, v)} for v in values]


def build() -> dict[str, Any]:
    cases = mechanisms()
    survey = {
        "id": "enquête-1",
        "title": "Habits",
        "questions": [
            *({"id": f"q-{name}", "text": "…", "mechanism": m.to_config()} for name, (m, _) in cases.items()),
            {"id": "q-design", "text": "Did you?", "design": {"model": "Warner", "p": ["3/4"]},
             "channels": [dn.BinaryRR(prob=0.75).to_config()],
             "mechanism": dn.survey.Warner("3/4").to_config()},  # as the server gives a design question
            {"id": "q-plain", "text": "Age", "randomized": False},
        ],
    }
    print_ = survey_fingerprint(survey)
    state = client_state.ClientState(f"survey {survey['id']}", print_, SECRET, {"device": DEVICE}).to_json()
    store = client_state.MemoryStore()
    store.create(state)
    kept = SurveyState(store, survey)
    questions = []
    for name, (m, values) in cases.items():
        qid = f"q-{name}"
        client = kept.client(qid, m)
        questions.append({
            "id": qid,
            "secret": client.secret.hex(),
            **extra(m, client),
            "draws": draws(m, client, values),
        })
    per_mechanism = []
    for i, (name, (m, values)) in enumerate(cases.items()):
        secret = bytes([i + 1] * 32)
        fields = {"cohort": i % m.num_cohorts} if isinstance(m, dn.RAPPOR) else {}
        store = client_state.MemoryStore()
        store.create(client_state.ClientState(m.wire_id, m.fingerprint, secret, fields).to_json())
        client = m.client(state=store)
        per_mechanism.append({
            "name": name, "config": m.to_config(), "fingerprint": m.fingerprint, "state": store.load(),
            **extra(m, client), "draws": draws(m, client, values),
        })
    labels = [["question", "q-rappor"], ["cohort", "q-rappor"], ["value 0"], ["str", "maté"], ["point 3"]]
    streams = [
        {"label": label, "bytes": client_state.ClientState("x", "y", SECRET).source(*label).random_bytes(48).hex()}
        for label in labels
    ]
    odd = {"b": [2.0, 1e-05, 1.5e16, 0.1, -0.0, 123456789.125, 1e22], "a": "é\u007f\n\"😀", "é": None, "c": True}
    canonical = [
        {"value": v, "text": json.dumps(v, sort_keys=True, separators=(",", ":"))}
        for v in (odd, cases["one-bit-mean"][0].to_config(), [1, 2.5, "x"])
    ]
    return {
        "about": "Made by tests/vectors/make_client_state.py from the Python implementation; do not edit.",
        "secret": SECRET.hex(),
        "streams": streams,
        "canonical": canonical,
        "survey": {
            "definition": survey, "fingerprint": print_, "state": state, "questions": questions,
        },
        "mechanisms": per_mechanism,
    }


def text() -> str:
    return json.dumps(build(), indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the checked-in file")
    args = parser.parse_args()
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text()
        print("up to date" if same else f"{OUT} is out of date: run python tests/vectors/make_client_state.py")
        return 0 if same else 1
    OUT.write_text(text(), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
