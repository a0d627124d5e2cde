"""The respondent's side of the collection service: fetch a survey, privatize, post.

Needs the ``client`` extra (``pip install 'deniable[client]'``: httpx only, so
a device does not install the server's dependencies).

>>> client = Client("http://127.0.0.1:8765")                         # doctest: +SKIP
>>> client.respond("honor-code", {"violated": False})                # doctest: +SKIP
{'status': 'accepted', 'response_id': '...', 'idempotency_key': '...'}

Each answer is randomized on this machine with the question's mechanism, as
configured by the server (``GET /surveys/{id}?wire_version=2``), using the operating
system's CSPRNG; only the privatized reports are sent. The true answers stay
inside :func:`privatize_answers` / :func:`privatize_answers_many`: the posting
code receives reports, never answers. A post is retried on connection errors
and 5xx answers with the *same* idempotency key, so a retry can never store a
response twice.

Each survey's randomizers are built from their configurations once and kept
(keyed by the questions' JSON, so a changed survey is built again): every
randomized question, a survey design's included, is ``from_config(question
["mechanism"]).privatize_many(answers)``, which accepts only the randomizer's
own answers (a design's ``True``/``False``, never the string ``"no"``) and
draws a two-group design's group uniformly on the device. A plain question's
answer is sent as given; a free-text question's answer (a string) is
randomized by its exact :class:`~deniable.HeavyHitters` configuration; a
key-value question's answer (``{key: value}`` in the question's ``[low,
high]``) has each value mapped onto ``[-1, 1]`` and is randomized by its
exact :class:`~deniable.PCKV` configuration.

The :class:`Client` speaks wire version 2 (:mod:`deniable.wire`): it fetches
the survey with ``?wire_version=2`` (integers beyond 2**53 of a
configuration as decimal strings) and posts its reports with
``"wire_version": 2`` (an OLH/BLH ``seed`` and RAPPOR's ``bits`` as decimal
strings). :func:`privatize_answers` and :func:`privatize_answers_many` take
a survey of either version and return version-1 reports, as before.

A survey with ``allocation: sample`` asks each respondent one question: the
device draws it uniformly from the survey's questions with the OS CSPRNG
(:func:`deniable._allocation.assign_questions`, an exact uniform integer),
randomizes only that answer and sends only its report. ``answers`` then
holds every question's answer, or at least the drawn one's: the caller
cannot steer which question is sent.

Repeated collection. ``Client(url, state="device.state")`` keeps this
device's state for one survey in that file (:mod:`deniable._client_state`:
created once, owner-only, refused for another survey or another version of
its questions): a 32-byte secret and the device key. Questions whose
mechanism memoizes (L-GRR, L-OSUE, dBitFlip, 1BitMean, RAPPOR) then answer
through the mechanism's kept client (``m.client(secret=...)``, the secret
derived from the state's secret and the question id), so every process that
answers with this state reuses the same permanent randomization and repeated
answers leak at most the mechanism's lifetime epsilon. A survey that runs in
``rounds`` gets the state's device key with every response (``device``: 128
bits from the OS CSPRNG, base64url, 22 characters), so the server can take
one response per device and round and keep the device within the survey's
``lifetime_epsilon``; it refuses the rest with :class:`AlreadyAnsweredError`
(409) or :class:`BudgetSpentError` (403). Such a survey needs ``state``.
Without ``state`` each response is randomized afresh (one-time reports).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import Any

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        f"deniable.client needs httpx ({exc}); install it with: pip install 'deniable[client]'"
    ) from exc

import numpy as np

from deniable import _client_state as client_state
from deniable import _randomness as randomness
from deniable._allocation import assign_questions
from deniable._client_state import ClientState
from deniable._estimate import Target, check_target
from deniable._question_devices import Device, FreeTextDevice, KeyValueDevice, PlainDevice, question_device
from deniable.errors import DeniableError
from deniable.mechanisms._contract import Mechanism
from deniable.survey._list import ListExperiment
from deniable.wire import MAX_BATCH, to_version
from deniable.wire._codecs import to_version as reports_to_version

__all__ = [
    "Client", "ClientError", "AlreadyAnsweredError", "BudgetSpentError", "SurveyState",
    "privatize_answers", "privatize_answers_many", "new_key", "new_device_key", "survey_fingerprint",
]


class ClientError(DeniableError):
    """The server refused a request (4xx); ``field`` and ``message`` come from its answer.

    ``retry_after`` is the server's ``Retry-After`` in seconds (a 429 of the
    survey's rate limit), else None.
    """

    def __init__(self, status: int, field: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {field}: {message}")
        self.status = status
        self.field = field
        self.message = message
        self.retry_after = retry_after


class AlreadyAnsweredError(ClientError):
    """409 on field ``device`` (``responses[i].device`` in a batch): the device already answered this round."""


class BudgetSpentError(ClientError):
    """403 on field ``device`` (``responses[i].device`` in a batch): the device has spent ``lifetime_epsilon``."""


def _client_error(status: int, field: str, message: str, retry_after: float | None) -> ClientError:
    """The server's refusal as a :class:`ClientError`, or its subclass for a device refused in a survey with rounds."""
    device = field == "device" or field.endswith(".device")  # a batch names the response: responses[3].device
    kinds = {409: AlreadyAnsweredError, 403: BudgetSpentError}
    kind = kinds.get(status, ClientError) if device else ClientError
    return kind(status, field, message, retry_after)


def new_key() -> str:
    """A fresh idempotency key: 32 URL-safe characters from the OS CSPRNG."""
    return secrets.token_urlsafe(24)


DEVICE_KEY_BYTES = 16


def new_device_key(source: randomness.Source = randomness.SECURE) -> str:
    """A device key: 128 bits from the OS CSPRNG as base64url without padding (22 characters)."""
    return base64.urlsafe_b64encode(source.random_bytes(DEVICE_KEY_BYTES)).rstrip(b"=").decode()


class SurveyState:
    """This device's kept state for one survey: its device key and the secrets of its memoizing questions.

    Kept as a :class:`~deniable._client_state.ClientState` (``state`` is a
    path or a store) under mechanism ``"survey <id>"`` and
    :func:`survey_fingerprint` (the questions' exact mechanism
    configurations), so a state written for another survey, or for other
    configurations, is refused (:class:`~deniable.errors.StateError`).
    ``fields`` hold the device key.
    """

    def __init__(self, state: client_state.StateLike, survey: Mapping[str, Any]) -> None:
        self.survey_id = str(survey["id"])
        self._state: ClientState = client_state.load_or_create(
            state, f"survey {self.survey_id}", survey_fingerprint(survey),
            lambda source: {"device": new_device_key(source)},
        )
        device = self._state.fields.get("device")
        if not isinstance(device, str) or not 22 <= len(device) <= 128 or device.strip(_KEY_CHARS):
            raise client_state.StateError(f"client state of survey {self.survey_id!r}: field 'device' is malformed")
        self.device: str = device
        self._clients: dict[str, Any] = {}

    def client(self, question_id: str, mechanism: Mechanism) -> Any:
        """The kept client of a memoizing question (its secret derived from the state's), or None."""
        if not hasattr(mechanism, "client"):
            return None
        if question_id not in self._clients:
            secret = self._state.source("question", question_id).random_bytes(client_state.SECRET_BYTES)
            options: dict[str, Any] = {"secret": secret}
            cohorts = getattr(mechanism, "num_cohorts", None)
            if cohorts is not None:  # RAPPOR: a cohort drawn once, from the same secret
                options["cohort"] = randomness.scalar_below(cohorts, self._state.source("cohort", question_id))
            self._clients[question_id] = mechanism.client(**options)
        return self._clients[question_id]

    def __repr__(self) -> str:
        return f"SurveyState(survey={self.survey_id!r})"


_KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_WIRE_VERSION = 2
"""The wire version the :class:`Client` fetches surveys and posts reports in."""


def survey_fingerprint(survey: Mapping[str, Any]) -> str:
    """What a kept state belongs to: SHA-256 (32 hex digits) of the survey's id and its questions'
    randomization (each question's id and mechanism configuration, design channels or plainness),
    so another configuration gets another state while a reworded text or a new field does not.
    The configurations are fingerprinted in wire version 1, so a survey fetched in either version
    gets the same state."""
    def v1(config: Any) -> Any:
        return to_version(config, 1) if isinstance(config, dict) else config

    questions = [  # a design question is fingerprinted by its channels, as before it carried its config
        [q["id"], None if q.get("design") else v1(q.get("mechanism")),
         None if q.get("channels") is None else [v1(c) for c in q["channels"]], q.get("randomized", True)]
        for q in survey["questions"]
    ]
    text = json.dumps({"id": survey["id"], "questions": questions}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=64)
def _built(questions: str) -> Mapping[str, Device]:
    """The device of every question, from the questions' canonical JSON (built once)."""
    return MappingProxyType({q["id"]: question_device(q) for q in json.loads(questions)})


def _mechanisms(survey: Mapping[str, Any]) -> Mapping[str, Device]:
    """``{question id: device}`` of a survey as ``GET /surveys/{id}`` gives it."""
    return _built(json.dumps(survey["questions"], sort_keys=True, separators=(",", ":")))


def _in_version(survey: Mapping[str, Any], reports: Mapping[str, Any], version: int) -> dict[str, Any]:
    """One respondent's version-1 reports in wire ``version`` (the wide fields of each mechanism's)."""
    devices = _mechanisms(survey)
    out = {}
    for qid, report in reports.items():
        device = devices[qid]
        out[qid] = reports_to_version([report], device.wide_fields, version)[0] if isinstance(device, Mechanism) \
            else report
    return out


def _check_questions(
    survey: Mapping[str, Any], answers: Mapping[str, Any], where: str, drawn: str | None = None
) -> None:
    expected = [q["id"] for q in survey["questions"]]
    if not isinstance(answers, Mapping):
        raise TypeError(f"{where} must be a dict {{question id: answer}}; got {type(answers).__name__}")
    extra = sorted(set(answers) - set(expected))
    if drawn is not None:  # allocation: sample
        if drawn not in answers or extra:
            raise ValueError(
                f"{where} must answer the question {drawn!r} drawn for this respondent (survey "
                f"{survey['id']!r} asks one question at random of {expected}); unknown {extra}"
            )
        return
    missing = [q for q in expected if q not in answers]
    if missing or extra:
        raise ValueError(
            f"{where} must answer exactly the questions {expected} of survey "
            f"{survey['id']!r}; missing {missing}, unknown {extra}"
        )


def privatize_answers(
    survey: Mapping[str, Any], answers: Mapping[str, Any], rng: randomness.RNGLike = None,
    *, state: SurveyState | None = None,
) -> dict[str, Any]:
    """``{question id: report JSON}`` for one respondent (secure randomness by default).

    With ``state`` (this device's :class:`SurveyState`) memoizing questions
    answer through their kept clients; the others as without it.
    """
    if survey.get("allocation") != "sample":
        _check_questions(survey, answers, "answers")
    if state is not None and state.survey_id != survey["id"]:
        raise ValueError(f"state is survey {state.survey_id!r}'s; these answers are to survey {survey['id']!r}")
    devices = _mechanisms(survey)
    kept = frozenset() if state is None else frozenset(
        qid for qid, device in devices.items() if isinstance(device, Mechanism) and hasattr(device, "client")
    )
    reports = _privatize_many(survey, [answers], randomness.resolve(rng), kept)[0]
    for qid in kept & set(reports):  # a kept question drawn (or every one, without allocation: sample)
        assert state is not None
        device = devices[qid]
        assert isinstance(device, Mechanism)
        report = state.client(qid, device).privatize(answers[qid])
        # a structured report (RAPPOR, dBitFlip) as a one-row array, any other as a one-item list
        reports[qid] = device.reports_to_json(np.array([report]) if isinstance(report, np.void) else [report])[0]
    return reports


def privatize_answers_many(
    survey: Mapping[str, Any], answers_list: Sequence[Mapping[str, Any]],
    rng: randomness.RNGLike = None,
) -> list[dict[str, Any]]:
    """Reports for many respondents, vectorized per question (``privatize_many``).

    Under ``allocation: sample`` each respondent's report is for one question
    drawn uniformly (module docstring), so each dict has one entry.
    """
    return _privatize_many(survey, answers_list, randomness.resolve(rng), frozenset())


def _privatize_many(
    survey: Mapping[str, Any], answers_list: Sequence[Mapping[str, Any]], source: randomness.Source,
    kept: frozenset[str],
) -> list[dict[str, Any]]:
    """privatize_answers_many with one stream; the questions in ``kept`` get a placeholder None
    (their kept clients answer them)."""
    if survey.get("allocation") == "sample":
        return _privatize_sampled(survey, answers_list, source, kept)
    for i, answers in enumerate(answers_list):
        _check_questions(survey, answers, f"answers_list[{i}]")
    columns: dict[str, list[Any]] = {}
    for qid, device in _mechanisms(survey).items():
        values = [a[qid] for a in answers_list]
        if qid in kept:
            columns[qid] = [None] * len(values)
        elif isinstance(device, (PlainDevice, FreeTextDevice, ListExperiment, KeyValueDevice)):
            columns[qid] = device.reports(values, source)
        else:
            columns[qid] = device.reports_to_json(device.privatize_many(values, rng=source))
    return [{qid: col[i] for qid, col in columns.items()} for i in range(len(answers_list))]


def _privatize_sampled(
    survey: Mapping[str, Any], answers_list: Sequence[Mapping[str, Any]], source: randomness.Source,
    kept: frozenset[str],
) -> list[dict[str, Any]]:
    devices = _mechanisms(survey)
    ids = list(devices)
    drawn = assign_questions(len(ids), len(answers_list), rng=source)
    for i, answers in enumerate(answers_list):
        _check_questions(survey, answers, f"answers_list[{i}]", ids[drawn[i]])
    out: list[dict[str, Any]] = [{} for _ in answers_list]
    for j, qid in enumerate(ids):
        rows = np.flatnonzero(drawn == j).tolist()
        device = devices[qid]
        if not rows or not isinstance(device, Mechanism):  # sampled surveys have mechanism questions only
            continue
        values = [answers_list[i][qid] for i in rows]
        reports = ([None] * len(rows) if qid in kept
                   else device.reports_to_json(device.privatize_many(values, rng=source)))
        for i, report in zip(rows, reports, strict=True):
            out[i][qid] = report
    return out


class Client:
    """A device's HTTP client for the collection service (httpx, keep-alive).

    ``retries`` is the number of retries after the first attempt, with
    exponential back-off starting at ``backoff`` seconds. ``token`` (a
    relay's or the admin's) is sent as ``Authorization: Bearer``: a survey
    open to everyone takes batches (:meth:`respond_many`) only with it, and
    a survey whose results are for administrators needs the admin token for
    :meth:`results`. A respondent's device needs none.

    ``state`` (a file path, or a :class:`~deniable._client_state.StateStore`)
    keeps this device's :class:`SurveyState` for the one survey it answers:
    memoizing questions reuse their permanent randomization across processes
    and a survey with ``rounds`` gets the device key (module docstring).

    A survey whose ``transport`` is ``{kind: ohttp, relay: URL}`` gets its
    responses encapsulated (Oblivious HTTP, RFC 9458; needs the ``ohttp``
    extra) and posted through that relay, which sees this device's address
    but not the reports, to the collector's gateway, which sees the reports
    but not the address. A shuffling relay answers ``202`` with its queued
    receipt, ``{"status": "queued", "stored": false, "threshold": ...,
    "max_delay": ...}`` (and :meth:`respond` adds the ``idempotency_key``): the
    response waits on the relay's disk for its shuffled batch. ``relay_transport`` is the httpx transport of the
    requests to the relay (tests: a local address).
    """

    def __init__(
        self,
        base_url: str,
        timeout: float = 10.0,
        retries: int = 3,
        *,
        backoff: float = 0.05,
        transport: httpx.BaseTransport | None = None,
        token: str | None = None,
        state: client_state.StateLike | None = None,
        relay_transport: httpx.BaseTransport | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be >= 0; got {retries}")
        self.state = state
        self._kept: dict[str, SurveyState] = {}
        self.retries = retries
        self.backoff = backoff
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self._http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport, headers=headers)
        self._surveys: dict[str, dict[str, Any]] = {}
        self._relay_transport = relay_transport
        self._relays: dict[str, httpx.Client] = {}

    # ------------------------------------------------------------ plumbing
    def close(self) -> None:
        self._http.close()
        for http in self._relays.values():
            http.close()

    def _via(self, survey: Mapping[str, Any]) -> httpx.Client:
        """The HTTP client that posts the survey's responses: direct, or through its relay (Oblivious HTTP)."""
        transport = survey.get("transport")
        if not isinstance(transport, Mapping) or transport.get("kind") != "ohttp":
            return self._http
        relay = str(transport["relay"])
        if relay not in self._relays:
            try:
                from deniable._ohttp._client import ObliviousTransport
            except ImportError as exc:
                raise ImportError(f"survey {survey['id']!r} is answered through an Oblivious HTTP relay, which "
                                  f"needs the ohttp extra: pip install 'deniable[ohttp]' ({exc})") from exc
            self._relays[relay] = httpx.Client(
                base_url=self._http.base_url, timeout=self._http.timeout, headers=self._http.headers,
                transport=ObliviousTransport(relay, timeout=self._http.timeout.read or 30.0,
                                             transport=self._relay_transport),
            )
        return self._relays[relay]

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _request(self, method: str, path: str, json: Any = None, via: httpx.Client | None = None) -> Any:
        """Send with retries on connection errors and 5xx; the body (and key) never change."""
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = (via or self._http).request(method, path, json=json)
            except httpx.TransportError:
                if last:
                    raise
            else:
                if response.status_code < 500:
                    break
                if last:
                    response.raise_for_status()
            time.sleep(self.backoff * 2**attempt)
        if response.status_code >= 400:
            try:
                detail = response.json()["detail"]
                field, message = str(detail["field"]), str(detail["message"])
            except (ValueError, KeyError, TypeError):
                field, message = "", response.text[:200]
            wait = response.headers.get("retry-after", "")
            raise _client_error(response.status_code, field, message, float(wait) if wait.isdigit() else None)
        return response.json()

    # ------------------------------------------------------------- surveys
    def survey(self, survey_id: str) -> dict[str, Any]:
        """The survey definition (questions and exact mechanism configs, in wire version 2); cached."""
        if survey_id not in self._surveys:
            self._surveys[survey_id] = self._request("GET", f"/surveys/{survey_id}?wire_version={_WIRE_VERSION}")
        return self._surveys[survey_id]

    def survey_state(self, survey_id: str) -> SurveyState | None:
        """This device's kept state for the survey (created on first use), or None without ``state``.

        Raises :class:`~deniable.errors.StateError` if the state file holds
        another survey's state, or was written for other questions.
        """
        if self.state is None:
            return None
        if survey_id not in self._kept:
            if self._kept:
                other = next(iter(self._kept))
                raise client_state.StateError(
                    f"this Client's state keeps survey {other!r}; answer survey {survey_id!r} with a Client "
                    "whose state is another file"
                )
            self._kept[survey_id] = SurveyState(self.state, self.survey(survey_id))
        return self._kept[survey_id]

    def results(self, survey_id: str, target: Target = "population") -> dict[str, Any]:
        """``GET /surveys/{id}/results?target=...``: estimates of the population the
        respondents were sampled from (the default) or of these ``"respondents"`` only."""
        query = f"?target={check_target(target)}"
        result: dict[str, Any] = self._request("GET", f"/surveys/{survey_id}/results{query}")
        return result

    # ------------------------------------------------------------ respond
    def respond(
        self, survey_id: str, answers: dict[str, Any], *, invite_token: str | None = None
    ) -> dict[str, Any]:
        """Privatize one respondent's answers locally and post the reports.

        Returns the server's answer ``{"status": "accepted", "response_id", "idempotency_key"}``.
        With the client's ``state``, memoizing questions answer through their
        kept clients; a survey with ``rounds`` needs the state and gets its
        device key, and a refusal of the device raises
        :class:`AlreadyAnsweredError` (409: this round is answered) or
        :class:`BudgetSpentError` (403: ``lifetime_epsilon`` is spent), each
        with the server's message.
        """
        survey = self.survey(survey_id)
        state = self.survey_state(survey_id)
        if survey.get("rounds") and state is None:
            raise ValueError(
                f"survey {survey_id!r} runs in rounds: create the Client with state=<a file path> so this device "
                "keeps its key and its memoized randomization from one round to the next"
            )
        reports = _in_version(survey, privatize_answers(survey, answers, state=state), _WIRE_VERSION)
        body: dict[str, Any] = {"idempotency_key": new_key(), "wire_version": _WIRE_VERSION, "reports": reports}
        if invite_token is not None:
            body["invite_token"] = invite_token
        if survey.get("rounds"):
            assert state is not None
            body["device"] = state.device
        result: dict[str, Any] = self._request("POST", f"/surveys/{survey_id}/responses", body, self._via(survey))
        if result.get("status") == "queued":  # by a shuffling relay: the collector's receipt never comes back
            result["idempotency_key"] = body["idempotency_key"]
        return result

    def respond_many(
        self,
        survey_id: str,
        answers_list: list[dict[str, Any]],
        *,
        batch_size: int = 1000,
        rng: randomness.RNGLike = None,
        devices: Sequence[str] | None = None,
    ) -> dict[str, int]:
        """Privatize many respondents' answers (vectorized) and post them in batches.

        For relays and simulations: a survey open to everyone needs the
        client's ``token`` (admin or relay). ``rng=None`` uses the OS CSPRNG;
        a seed is for simulations only. Every response is randomized afresh
        (no kept state: these are many respondents). A survey with ``rounds``
        needs ``devices``, one device key per respondent (e.g.
        :func:`new_device_key`, kept by the caller to simulate later rounds).
        Returns ``{"accepted": n new, "duplicates": n already stored}`` summed over batches.
        """
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be in 1..{MAX_BATCH}; got {batch_size}")
        survey = self.survey(survey_id)
        if devices is not None and len(devices) != len(answers_list):
            raise ValueError(f"devices must hold one key per respondent ({len(answers_list)}); got {len(devices)}")
        if survey.get("rounds") and devices is None:
            raise ValueError(
                f"survey {survey_id!r} runs in rounds: pass devices=[one device key per respondent]"
            )
        reports = privatize_answers_many(survey, answers_list, rng=rng)
        keys: Sequence[str | None] = [None] * len(reports) if devices is None else devices
        totals = {"accepted": 0, "duplicates": 0}
        for start in range(0, len(reports), batch_size):
            body = {
                "wire_version": _WIRE_VERSION,
                "responses": [
                    {"idempotency_key": new_key(), "reports": _in_version(survey, r, _WIRE_VERSION),
                     **({"device": d} if d is not None else {})}
                    for r, d in zip(reports[start : start + batch_size], keys[start : start + batch_size],
                                    strict=True)
                ]
            }
            result = self._request("POST", f"/surveys/{survey_id}/responses/batch", body, self._via(survey))
            if result.get("status") == "queued":  # a shuffling relay keeps the batch as one report
                totals["queued"] = totals.get("queued", 0) + len(reports[start : start + batch_size])
                continue
            totals["accepted"] += int(result["accepted"])
            totals["duplicates"] += int(result["duplicates"])
        return totals
