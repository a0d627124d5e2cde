"""The devices' routes: the survey as devices need it, and posting responses (one, or a relay's batch).

Both speak either wire version (:mod:`deniable.wire`): ``GET
/surveys/{id}?wire_version=2`` gives every mechanism configuration in
version 2 (its integers beyond 2**53 as decimal strings, so a browser reads
the survey exactly with ``JSON.parse``), and a response or a batch with
``"wire_version": 2`` sends its reports in version 2. Version 1 is the
default of both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials
from starlette.concurrency import run_in_threadpool

from deniable.server._answers import Accepted, BatchAccepted, Queued, RootOut, SurveyOut
from deniable.server._bodies import BatchIn, ResponseIn, openapi_body
from deniable.server._embed import refuse_cross_site, require_json
from deniable.server._errors import Invalid, printable
from deniable.server._refusals import BODY, errors, json_body
from deniable.server._routes.service import Service
from deniable.server._security import bearer, require_relay, require_shuffled, take_token
from deniable.server._storage import SubmitResult
from deniable.server._submissions import check_wire_version
from deniable.wire import to_version

__all__ = ["router", "public_response_id", "survey_in_version", "QUEUED"]

QUEUED: dict[int | str, dict[str, Any]] = {202: {
    "model": Queued,
    "description": "Queued, not stored: answered by a shuffling relay (deniable relay --shuffle, for a survey with "
    "transport.shuffler), never by this service. The relay holds the encapsulated request on its disk and forwards it "
    "in a shuffled batch once it holds threshold of them, after a random delay; this service's own answer never "
    "comes back.",
}}
"""OpenAPI: the ``202`` a shuffling relay answers in the service's place (:class:`~deniable.server._answers.Queued`)."""


def public_response_id(survey_id: str, idempotency_key: str) -> str:
    """A receipt for a stored response: a hash of its survey and key.

    Stable across retries, and unlike the database's sequential row id it does
    not tell a respondent how many responses came before theirs.
    """
    return hashlib.sha256(f"{survey_id}\x00{idempotency_key}".encode()).hexdigest()[:24]


def survey_in_version(survey: dict[str, Any], version: int) -> dict[str, Any]:
    """The survey as ``GET /surveys/{id}`` gives it, its questions' mechanism and design channel
    configurations in wire ``version`` (a discovery configuration has one version: as it is)."""
    if version == 1:
        return survey
    questions = []
    for q in survey["questions"]:
        q = dict(q)
        if q.get("mechanism") is not None:
            q["mechanism"] = to_version(q["mechanism"], version)
        if q.get("channels") is not None:
            q["channels"] = [to_version(c, version) for c in q["channels"]]
        questions.append(q)
    return {**survey, "questions": questions}


def _top(_index: int) -> str:
    return ""


def _batch_items(raw: bytes) -> list[Any]:
    """The responses of a batch body, decoded and shaped as :class:`~deniable.server._bodies.BatchIn` says."""
    data = json_body(raw)
    if not isinstance(data, dict):
        raise Invalid("body", f'must be an object {{"responses": [...]}}; got {type(data).__name__}')
    extra = sorted(set(data) - {"responses", "wire_version"})
    if extra:
        raise Invalid(printable(extra[0]), "is not a field of a batch (only 'responses' and 'wire_version')")
    items = data.get("responses")
    if not isinstance(items, list):
        raise Invalid("responses", f"must be an array of responses; got {type(items).__name__}")
    if "wire_version" not in data:
        return items
    version = data["wire_version"]
    check_wire_version(version, "wire_version")
    # the batch's version is each response's, unless the response names its own
    return [{"wire_version": version, **item} if isinstance(item, dict) else item for item in items]


def router(service: Service) -> APIRouter:
    """``/``, ``GET /surveys/{id}``, ``POST /surveys/{id}/responses`` and ``.../responses/batch``."""
    store = service.store
    api = APIRouter(tags=["devices"])

    async def submit(
        survey_id: str, bodies: list[dict[str, Any]], where: Callable[[int], str] = _top
    ) -> SubmitResult:
        # checking and writing block (~0.1 s for a 10,000-response batch): from the thread
        # pool, so the event loop keeps answering reads meanwhile (SQLite writers queue on
        # the storage's lock; the 2xx is sent only after the commit returned)
        return await run_in_threadpool(store.submit, survey_id, bodies, where)

    @api.get("/", response_model=RootOut)
    def root(request: Request) -> dict[str, Any]:
        """Where to look: surveys are not listed (a survey's id is given by whoever runs it)."""
        return {
            "service": request.app.title,
            "surveys": "not listed; open /s/{survey_id} (the survey page) or /s/{survey_id}/results "
            "with the id you were given",
            "api": "/docs (the OpenAPI document: /openapi.json)",
        }

    @api.get("/surveys/{survey_id}", response_model=SurveyOut, responses=errors(404, 422))
    def get_survey(
        survey_id: str,
        wire_version: Annotated[int, Query(ge=1, le=2,
            description="the wire version of the configurations: 1 (the default), or 2 (integers beyond "
            "2**53 as decimal strings, for JSON.parse)"
        )] = 1,
    ) -> dict[str, Any]:
        """The survey as devices need it: each question's exact mechanism configuration."""
        return survey_in_version(store.public(survey_id), wire_version)

    @api.post(
        "/surveys/{survey_id}/responses", status_code=201, response_model=Accepted,
        responses={**QUEUED, **errors(*BODY, 403, 404, 409, 415, 429)}, openapi_extra=openapi_body(ResponseIn),
    )
    async def post_response(survey_id: str, request: Request) -> JSONResponse:
        """Store one respondent's privatized reports (a :class:`ResponseIn`; idempotent by ``idempotency_key``).

        A retry with the same key and body gets the identical answer; the same
        key with another body is refused (409). A survey open to everyone takes
        at most its ``rate_limit`` of requests per client address (429 with
        ``Retry-After`` beyond it, answered before the body is read). The body
        must be ``Content-Type: application/json`` (415), and a browser's request
        from another site is refused (403) unless its origin is in the survey's
        ``embed.origins``, which get CORS.
        """
        survey = store.survey(survey_id)
        refuse_cross_site(request, survey.policy.embed_origins)
        require_json(request)
        require_shuffled(request, survey)
        client = take_token(service.limiter, request, survey, service.trusted_proxies)
        stored = 0
        try:
            body = json_body(await request.body())
            # stored on the event loop's thread where that needs no wait (SQLite, no other writer): handing
            # one response to the thread pool costs more CPU than storing it
            result = store.submit_at_once(survey_id, [body])
            stored = (result if result is not None else await submit(survey_id, [body])).accepted
        finally:
            if client is not None and not stored:  # refused, or a retry of a stored response: free
                assert survey.policy.rate_limit is not None
                service.limiter.give_back(survey.id, client, survey.policy.rate_limit)
        key = body["idempotency_key"]
        # an Accepted (the OpenAPI document's model), answered as is: nothing to validate in what we built
        return JSONResponse({"status": "accepted", "response_id": public_response_id(survey_id, key),
                             "idempotency_key": key}, status_code=201)

    def decode_and_submit(survey_id: str, raw: bytes) -> SubmitResult:
        return store.submit(survey_id, _batch_items(raw), lambda i: f"responses[{i}].")

    @api.post(
        "/surveys/{survey_id}/responses/batch", status_code=201, response_model=BatchAccepted,
        responses={**QUEUED, **errors(*BODY, 401, 403, 404, 409, 415)}, openapi_extra=openapi_body(BatchIn),
    )
    async def post_batch(
        survey_id: str, request: Request,
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> dict[str, Any]:
        """Store up to 10,000 responses at once (a :class:`BatchIn`); all are validated before any is stored.

        For trusted relays: a survey open to everyone needs ``Authorization:
        Bearer <token>`` with the admin token or the relay token (checked
        before the body is read); on an invite-only survey every response
        needs its own unused invite instead. ``Content-Type: application/json``
        only (415); a browser's request from another site is refused (403).
        """
        survey = store.survey(survey_id)
        refuse_cross_site(request, survey.policy.embed_origins)
        require_json(request)
        require_shuffled(request, survey)
        require_relay(request, survey, service.relay_token)
        # the body (up to 16 MB) is decoded in the thread pool too, not on the event loop
        result = await run_in_threadpool(decode_and_submit, survey_id, await request.body())
        return {"accepted": result.accepted, "duplicates": result.duplicates}

    return api
