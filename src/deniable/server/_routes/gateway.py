"""The Oblivious HTTP gateway (RFC 9458): requests that came through a relay, served without their sender's address.

``GET /.well-known/ohttp-gateway`` gives the key configuration
(``application/ohttp-keys``; the well-known location of RFC 9540), and
``POST /.well-known/ohttp-gateway`` takes an encapsulated request
(``message/ohttp-req``) from a relay: the gateway opens it with the key ring
(:class:`deniable._ohttp._keys.KeyRing`), serves the Binary HTTP request
inside by calling this same app in process, and answers the encapsulated
response (``message/ohttp-res``).

What the gateway sees of the sender: nothing. The inner request is served
with no client address (the ASGI scope's ``client`` is None) and none of the
outer request's headers; the relay, which sees the address, sends none
(:mod:`deniable._ohttp._relay`). Posting to the gateway needs the relay
token (or the admin token): a respondent's single response is rate-limited
per address by the relay, which alone knows it, so the gateway accepts
encapsulated requests only from a trusted relay. Requests to the gateway
itself are refused (no nesting). ``POST /.well-known/ohttp-gateway/batch``
takes a shuffler's batch (:mod:`deniable._ohttp._shuffler`): its requests
are served in the shuffled order they came in, and answered to nobody.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.types import Message

from deniable._ohttp._bhttp import BHTTPError, BinaryRequest, BinaryResponse, decode_request, encode_response
from deniable._ohttp._keys import KeyRing
from deniable._ohttp._messages import (
    GATEWAY_PATH,
    KEY_PROBLEM,
    KEYS_TYPE,
    REQUEST_TYPE,
    RESPONSE_TYPE,
    OHTTPError,
    UnknownKey,
    decapsulate_request,
    encapsulate_response,
    encode_key_configs,
)
from deniable._ohttp._shuffler import BATCH_TYPE, decode_batch
from deniable.server._refusals import error_response
from deniable.server._routes.service import Service
from deniable.server._security import OHTTP_SCOPE_KEY, SHUFFLED_SCOPE_KEY, is_token, presented_token
from deniable.server._surveys import Survey

__all__ = ["router", "serve_inside", "GATEWAY_PATH"]


_DROPPED = frozenset({b"host", b"content-length", b"connection", b"transfer-encoding", b"forwarded",
                      b"x-forwarded-for", b"x-real-ip", b"via"})


def _key_problem() -> Response:
    return Response(
        b'{"type":"' + KEY_PROBLEM.encode() + b'","title":"key identifier unknown"}', 400,
        media_type="application/problem+json",
    )


async def serve_inside(app: Any, method: str, target: str, headers: list[tuple[bytes, bytes]],
                       content: bytes, shuffled: bool = False) -> BinaryResponse:
    """Serve one request by calling ``app`` in process, with no client address; its response.

    ``shuffled``: it came in a shuffler's batch (a survey collected through a shuffler takes no other).
    """
    path, _, query = target.partition("?")
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "method": method, "scheme": "https", "path": path, "raw_path": path.encode(), "root_path": "",
        "query_string": query.encode(), "client": None, "server": None, "state": {},
        "headers": [(b"host", b"gateway"), (b"content-length", str(len(content)).encode())]
        + [(k, v) for k, v in headers if k not in _DROPPED],
        OHTTP_SCOPE_KEY: True,
        SHUFFLED_SCOPE_KEY: shuffled,
    }
    sent = False
    started: dict[str, Any] = {}
    body: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": content, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            started.update(message)
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    await app(scope, receive, send)
    fields = tuple((k.lower(), v) for k, v in started.get("headers", []) if k.lower() not in _DROPPED)
    return BinaryResponse(int(started.get("status", 500)), fields, b"".join(body))


def _batch_round(survey: Survey, began: float, ended: float) -> int | None:
    """The round a batch served from ``began`` to ``ended`` stored a survey's responses in: None for a survey
    without rounds, and for a batch that crossed the end of a round (its responses cannot be split by round)."""
    if survey.rounds is None:
        return None
    first, last = survey.rounds.round_at(began), survey.rounds.round_at(ended)
    return first if first == last and first >= 0 else None


def router(service: Service, keys: KeyRing) -> APIRouter:
    """``GET`` and ``POST /.well-known/ohttp-gateway``."""
    api = APIRouter(tags=["oblivious HTTP"])
    one_batch_at_a_time = asyncio.Lock()

    @api.get(GATEWAY_PATH, response_class=Response,
             responses={200: {"content": {KEYS_TYPE: {}}, "description": "the key configurations"}})
    def key_configs() -> Response:
        """The gateway's key configuration (``application/ohttp-keys``, RFC 9458 Section 3.2): encapsulate for it."""
        return Response(encode_key_configs(keys.configs()), media_type=KEYS_TYPE,
                        headers={"Cache-Control": "public, max-age=3600"})

    def check_relay(request: Request, expected: str) -> Response | None:
        if not is_token(presented_token(request), service.admin_token, service.relay_token):
            raise HTTPException(401, {"field": "Authorization", "message": "the gateway takes encapsulated "
                                      "requests from a trusted relay only: 'Bearer <relay token>'"},
                                {"WWW-Authenticate": "Bearer"})
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        return None if kind == expected else error_response(
            415, "Content-Type", f"must be {expected}; got {kind or 'none'!r}")

    async def serve(app: Any, message: BinaryRequest, shuffled: bool = False) -> BinaryResponse:
        """The answer to one decapsulated request."""
        if message.path.startswith(GATEWAY_PATH):
            return BinaryResponse(400, ((b"content-type", b"application/json"),),
                                  b'{"detail":{"field":"path","message":"the gateway does not serve itself"}}')
        return await serve_inside(app, message.method, message.path, list(message.headers), message.content,
                                  shuffled)

    @api.post(GATEWAY_PATH, response_class=Response,
              responses={200: {"content": {RESPONSE_TYPE: {}}, "description": "the encapsulated response"}})
    async def gateway(request: Request) -> Response:
        """Serve an encapsulated request (``message/ohttp-req``) from a relay holding the relay token."""
        refused = check_relay(request, REQUEST_TYPE)
        if refused is not None:
            return refused
        try:
            inner, context = decapsulate_request(await request.body(), keys.accepted())
        except UnknownKey:
            return _key_problem()
        except OHTTPError as exc:
            return error_response(400, "body", str(exc))
        try:
            message = decode_request(inner)
        except BHTTPError as exc:
            return error_response(400, "body", f"the encapsulated request is not Binary HTTP: {exc}")
        answer = await serve(request.app, message)
        return Response(encapsulate_response(context, encode_response(answer)), media_type=RESPONSE_TYPE,
                        headers={"Cache-Control": "no-store"})

    @api.post(GATEWAY_PATH + "/batch", response_model=None)
    async def gateway_batch(request: Request) -> Response | dict[str, int]:
        """Serve a shuffler's batch of encapsulated requests, in the order given (``deniable relay --shuffle``).

        The answers go nowhere (the devices were answered ``202`` by the relay); the
        count of requests served (2xx), refused (4xx) and not opened comes back.
        For each survey the batch stored responses of, the number it stored is
        recorded (:meth:`~deniable.server._storage.Storage.add_shuffled_batch`),
        with its round for a survey with rounds: the results state the shuffled
        guarantee for the smallest (of each round).
        """
        refused = check_relay(request, BATCH_TYPE)
        if refused is not None:
            return refused
        try:
            items = decode_batch(await request.body())
        except ValueError as exc:
            return error_response(400, "body", str(exc))
        accepted = keys.accepted()
        tally = {"served": 0, "refused": 0, "unopened": 0}
        messages = []
        for item in items:
            try:
                messages.append(decode_request(decapsulate_request(item, accepted)[0]))
            except (OHTTPError, BHTTPError):
                tally["unopened"] += 1
        async with one_batch_at_a_time:  # so that what was stored since the mark is this batch's
            mark = await run_in_threadpool(service.store.newest_response_id)
            began = service.store.clock()
            for message in messages:  # in the shuffler's order
                answer = await serve(request.app, message, shuffled=True)
                tally["served" if answer.status < 400 else "refused"] += 1
            ended = service.store.clock()
            # what this batch stored, by survey (a survey collected through a shuffler takes nothing else)
            for sid, stored in (await run_in_threadpool(service.store.responses_since, mark)).items():
                survey = service.store.survey(sid)
                if survey.policy.transport.shuffler:
                    await run_in_threadpool(service.store.add_shuffled_batch, sid, stored,
                                            _batch_round(survey, began, ended))
        return tally

    return api
