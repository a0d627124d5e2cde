"""The collection service: a FastAPI app over :class:`deniable.server.storage.Storage`.

Devices fetch a survey (every question's exact mechanism configuration),
randomize on their side, and post only the privatized reports. The server
validates every report against its question's mechanism before storing
anything, keeps each question's mergeable aggregate up to date in the same
transaction, and answers ``GET /surveys/{id}/results`` from the aggregates.

Errors are JSON ``{"detail": {"field": <JSON path>, "message": <what was
expected and what came>}}`` with a 4xx status. See the generated OpenAPI
document at ``/openapi.json`` (browsable at ``/docs``).

The app never logs report payloads or tokens; the runner's access log omits
query strings and client addresses (:mod:`deniable.server.runner`).

Against flooding (docs/howto/flooding.md): single responses to a survey open
to everyone are rate-limited per client address
(:mod:`deniable.server.ratelimit`), a survey's ``max_responses`` is enforced
by the storage, and batches to an open survey need the admin or a relay
token (:mod:`deniable.server.access`). Every answer carries the security
headers of :mod:`deniable.server.headers`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deniable.server.access import BASIC_REALM, is_token, presented_token
from deniable.server.errors import Conflict, Forbidden, Invalid, NotFound, StorageError, printable
from deniable.server.export import csv_chunks, parquet_bytes
from deniable.server.headers import DOCS_ASSETS, SecurityHeaders, swagger_ui_dir
from deniable.server.ratelimit import RateLimiter, client_address, parse_networks, retry_after
from deniable.server.results import question_estimates, results_json, rounds_json
from deniable.server.rounds import DEVICE_PATTERN
from deniable.server.shuffled import Ahead
from deniable.server.storage import Storage, SubmitResult
from deniable.server.submissions import KEY_PATTERN, MAX_TOKEN_LENGTH
from deniable.server.surveys import Survey, SurveyError
from deniable.wire import MAX_BATCH

__all__ = ["create_app", "STATIC_DIR", "MAX_BODY_BYTES", "ADMIN_TOKEN_ENV", "RELAY_TOKEN_ENV"]

STATIC_DIR = Path(__file__).parent / "static"
MAX_BODY_BYTES = 16 * 1024 * 1024
ADMIN_TOKEN_ENV = "DENIABLE_ADMIN_TOKEN"
RELAY_TOKEN_ENV = "DENIABLE_RELAY_TOKEN"


# --------------------------------------------------------------------- models
IdempotencyKey = Annotated[str, StringConstraints(pattern=f"^{KEY_PATTERN.pattern}$")]


class ResponseIn(BaseModel):
    """One respondent's privatized reports, one per question.

    This model documents the request body; the body is decoded after the
    rate limit and checked (once) by :func:`deniable.server.submissions.prepare`,
    as each item of a batch is, with the same messages.
    """

    model_config = ConfigDict(extra="forbid")

    idempotency_key: IdempotencyKey = Field(
        description="8-128 characters [A-Za-z0-9_-], chosen by the device; a retry reuses it"
    )
    invite_token: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TOKEN_LENGTH)] | None = Field(
        default=None, description="single-use invite (required by invite-only surveys)"
    )
    device: Annotated[str, StringConstraints(pattern=f"^{DEVICE_PATTERN.pattern}$")] | None = Field(
        default=None, description="the device's pseudonymous key (>= 128 random bits, base64url): required "
        "by a survey with rounds, refused by any other; the server stores only a keyed hash of it"
    )
    reports: dict[str, Any] = Field(
        description="{question id: report JSON}, every question exactly once; the report "
        "format is the question's mechanism's (m.reports_to_json)"
    )


class BatchIn(BaseModel):
    """1 to 10,000 responses, each a :class:`ResponseIn`.

    This model documents the request body; the body is decoded in the thread
    pool and checked once by :func:`deniable.server.submissions.prepare`
    (paths like ``responses[3].idempotency_key``) instead of being built into
    10,000 models first.
    """

    model_config = ConfigDict(extra="forbid")

    responses: list[ResponseIn] = Field(min_length=1, max_length=MAX_BATCH)


class Accepted(BaseModel):
    status: Literal["accepted"]
    response_id: str = Field(description="opaque receipt; reveals nothing about other responses")
    idempotency_key: str


def public_response_id(survey_id: str, idempotency_key: str) -> str:
    """A receipt for a stored response: a hash of its survey and key.

    Stable across retries, and unlike the database's sequential row id it does
    not tell a respondent how many responses came before theirs.
    """
    return hashlib.sha256(f"{survey_id}\x00{idempotency_key}".encode()).hexdigest()[:24]


class BatchAccepted(BaseModel):
    accepted: int = Field(description="responses stored by this request")
    duplicates: int = Field(description="responses whose key was already stored with this body")


class ErrorDetail(BaseModel):
    field: str = Field(description="JSON path of the offending field")
    message: str


class ErrorOut(BaseModel):
    detail: ErrorDetail


class QuestionOut(BaseModel):
    id: str
    text: str
    type: Literal["yes-no", "categorical", "integer", "free-text", "number"]
    categories: list[Any] | None = None
    mechanism: dict[str, Any] | None = Field(
        default=None, description="the exact mechanism config (m.to_config()) of a mechanism question"
    )
    randomized: bool = Field(default=True, description="false: a plain question, answered and stored as given")
    design: dict[str, Any] | None = Field(
        default=None, description="a survey design: RRreg's model name and exact p (deniable.survey)"
    )
    groups: int | None = Field(default=None, description="a design's groups: 2 means the device draws its group")
    channels: list[dict[str, Any]] | None = Field(
        default=None, description="a design's exact binary-rr channel config per group (epsilon null if infinite)"
    )
    epsilon: float | None = Field(default=None, description="a design's epsilon (null if infinite)")
    reveals_truth: bool | None = Field(default=None, description="a design whose answer can reveal the truth")
    allow_infinite_epsilon: bool | None = None
    unrelated_question: str | None = Field(
        default=None, description="UQTunknown: asked on the device, its answer never sent"
    )
    min: int | None = Field(default=None, description="a plain integer question's smallest answer")
    max: int | None = None
    discovery: dict[str, Any] | None = Field(
        default=None, description="a free-text question's exact discovery config (HeavyHitters.to_config)"
    )
    max_length: int | None = Field(default=None, description="a free-text answer's bytes of UTF-8 kept")
    kind: Literal["text", "integer"] | None = Field(default=None, description="a free-text question's values")
    method: Literal["pem", "sfp"] | None = Field(default=None, description="a free-text question's protocol")
    alphabet: str | None = Field(
        default=None, description="a free-text question's allowed characters (PEM; absent: any text)"
    )
    low: float | None = Field(default=None, description="a number question's smallest answer")
    high: float | None = Field(default=None, description="a number question's largest answer")
    units: str | None = Field(default=None, description="a number question's units (text)")


class RoundsOut(BaseModel):
    """A survey's rounds (deniable.server.rounds)."""

    every: int = Field(description="length of a round in seconds")
    lifetime_epsilon: float = Field(description="the most one device may spend over all rounds")
    start: str = Field(description="when round 0 starts (ISO-8601 UTC)")


class SurveyOut(BaseModel):
    id: str
    title: str
    status: Literal["open", "closed"]
    budget: float
    epsilon_total: float | None = Field(
        description="sum of the questions' epsilons (per respondent; the largest under allocation: "
        "sample); null if infinite (an allowed design whose answer reveals the truth)"
    )
    invite_only: bool
    allocation: Literal["split", "sample"] = Field(
        description="split: answer every question; sample: the device draws one question uniformly "
        "(exact integer from its CSPRNG) and sends only that question's report"
    )
    rounds: RoundsOut | None = Field(
        default=None, description="null unless the survey runs in rounds: then one response per device per "
        "round, each with the device's key, within lifetime_epsilon per device"
    )
    current_round: int | None = Field(
        default=None, description="the 0-based round by the server's clock (surveys with rounds; "
        "null before rounds.start)"
    )
    questions: list[QuestionOut]


class SupportCountsOut(BaseModel):
    fingerprint: str = Field(description="fingerprint of the mechanism configuration")
    n: int = Field(description="number of reports")
    counts: list[int] = Field(description="reports supporting each category (C_v)")


class QuestionResult(BaseModel):
    id: str
    text: str
    type: str
    mechanism: str = Field(description="mechanism class name")
    epsilon: float
    n: int
    target: Literal["population", "respondents"] = Field(
        description="what the estimates are of: the population the respondents were sampled "
        "from, or these respondents only (it decides std_error and the interval)"
    )
    categories: list[Any]
    estimate: list[float | None] = Field(description="unbiased frequency per category")
    std_error: list[float | None] = Field(description="standard error per category, for target")
    ci_low: list[float | None] = Field(description="normal interval at level (low end), per category")
    ci_high: list[float | None] = Field(description="normal interval at level (high end)")
    observed: list[float | None] = Field(description="raw share of reports supporting each category")
    consistent: list[float | None] = Field(description="Norm-Sub projection onto the simplex")
    support_counts: SupportCountsOut = Field(
        description="the question's aggregate (SupportCounts.to_json): every value above "
        "follows from it and the mechanism config"
    )


class DesignParameter(BaseModel):
    name: str = Field(description='"pi" (the prevalence), then a two-group design\'s extra parameter')
    estimate: float | None
    std_error: float | None = Field(description="standard error (sampling model, as RRreg's RRuni)")
    ci_low: float | None = Field(description="profile-likelihood interval at the results' level")
    ci_high: float | None


class DesignResult(BaseModel):
    """A design question's prevalence (deniable.server.design_results)."""

    id: str
    text: str
    type: str
    kind: Literal["design"]
    design: dict[str, Any]
    groups: int
    epsilon: float | None = Field(description="null if infinite: an answer reveals the truth")
    reveals_truth: bool
    n: int
    answer_counts: list[list[int]] = Field(description='answers per group: [["no", "yes"], ...]')
    estimator: str
    method: str | None
    parameters: list[DesignParameter]
    by: list[dict[str, Any]] = Field(
        description="per plain categorical question: prevalence per category and a likelihood-ratio test"
    )


class PlainResult(BaseModel):
    """A plain question's answers, as given (not randomized)."""

    id: str
    text: str
    type: str
    kind: Literal["plain"]
    randomized: Literal[False]
    n: int
    categories: list[Any] | None = None
    values: list[int] | None = None
    counts: list[int]
    mean: float | None = None
    min: int | None = None
    max: int | None = None


class DiscoveredValue(BaseModel):
    value: str | int = Field(description="a value respondents typed (as typed: escape it before display)")
    count: float = Field(description="estimated respondents who gave it")
    std_error: float
    ci_low: float = Field(description="normal interval at the results' level (low end)")
    ci_high: float
    truncated: bool = Field(description="a text cut at max_length (the answers began with it)")


class DiscoveryResult(BaseModel):
    """A free-text question's discovered values (deniable.server.discovery)."""

    id: str
    text: str
    type: Literal["free-text"]
    kind: Literal["discovery"]
    method: Literal["pem", "sfp"]
    value_kind: Literal["text", "integer"]
    max_length: int
    top_k: int
    epsilon: float
    n: int
    target: Literal["population"]
    level: float
    selection: str
    values: list[DiscoveredValue] = Field(description="most frequent first")
    alphabet: str | None = Field(default=None, description="the question's allowed characters (absent: any text)")


class MeanResult(BaseModel):
    """A number question's estimated mean (deniable.server.numeric_questions)."""

    id: str
    text: str
    type: Literal["number"]
    kind: Literal["mean"]
    mechanism: str = Field(description="mechanism class name")
    epsilon: float = Field(description="one report's epsilon")
    n: int
    target: Literal["population", "respondents"]
    level: float
    low: float
    high: float
    units: str | None
    estimate: float | None = Field(description="unbiased mean of the answers (clamped to [low, high])")
    std_error: float | None = Field(description="standard error, for target")
    ci_low: float | None = Field(description="normal interval at level (low end)")
    ci_high: float | None
    aggregate: dict[str, Any] = Field(description="the merged MeanStat (n, sums of the standardized reports)")


class ShuffledOut(BaseModel):
    """The central guarantee of the responses if collected through a trusted shuffler."""

    n: int = Field(description="responses")
    epsilon_local: float = Field(description="each response's epsilon (the survey's epsilon_total)")
    epsilon: float = Field(description="central epsilon of the shuffled responses (Feldman, McMillan & Talwar)")
    delta: float = Field(description="min(1e-6, n^-1.1)")


class BudgetShare(BaseModel):
    share: float = Field(description="a share of lifetime_epsilon")
    devices: int = Field(description="devices that spent at least this share (memoization cap applied: "
                         "what the server enforces)")
    devices_fresh: int = Field(description="the same, every report counted (no memoization cap)")


class DeviceBudgets(BaseModel):
    devices: int = Field(description="devices seen")
    lifetime_epsilon: float
    max_spent: float
    max_spent_fresh: float
    at_least: list[BudgetShare]


class RoundResult(BaseModel):
    round: int
    start: str = Field(description="ISO-8601 UTC")
    end: str
    n_responses: int
    shuffled: ShuffledOut | None = Field(description="this round's responses (one per device) if shuffled")
    questions: list[QuestionResult | DesignResult | PlainResult | DiscoveryResult | MeanResult]


class RoundsResult(BaseModel):
    """The results of each round of a survey with rounds, and its devices' spent budgets."""

    every: int
    lifetime_epsilon: float
    start: str
    current_round: int | None
    devices: DeviceBudgets
    rounds: list[RoundResult] = Field(description="every round with responses, in order")


class ResultsOut(BaseModel):
    id: str
    title: str
    allocation: Literal["split", "sample"] = Field(
        description="split: every response answers every question; sample: one random question each"
    )
    n_responses: int
    shuffled: ShuffledOut | None = Field(
        description="null for an infinite epsilon_total or plain (unrandomized) questions; for a survey "
        "with rounds it is per round (rounds.rounds[].shuffled)"
    )
    target: Literal["population", "respondents"]
    level: float
    questions: list[QuestionResult | DesignResult | PlainResult | DiscoveryResult | MeanResult]
    rounds: RoundsResult | None = Field(default=None, description="surveys with rounds only")


class InvitesIn(BaseModel):
    """How many invites to make (checked by :meth:`Storage.create_invites`)."""

    model_config = ConfigDict(extra="forbid")

    count: Any = Field(json_schema_extra={"type": "integer", "minimum": 1, "maximum": MAX_BATCH})


class InvitesOut(BaseModel):
    tokens: list[str]


class RootOut(BaseModel):
    service: str
    surveys: str = Field(description="surveys are not listed; where to open one")
    api: str


class StatusOut(BaseModel):
    id: str
    status: Literal["open", "closed"]


_ERROR_MEANING = {
    400: "the body is not decodable JSON (bad UTF-8, nested too deep, a number too long)",
    401: "missing or wrong token: the admin token (admin API, results: admin), or the admin or a "
         "relay token (batches to a survey open to everyone)",
    403: "an invite-only survey without a valid, unused invite token; or a report that would take a "
         "device over the survey's lifetime_epsilon (field device)",
    404: "no survey with this id",
    409: "a conflict with what is stored (a reused key, a closed or full survey, another survey's id, "
         "a second response of a device in one round)",
    413: "the request body is too large",
    422: "a malformed request; the field and the expected value are named",
    429: "the survey's rate limit for one client address (rate_limit); Retry-After says when to try again",
}


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of a route's refusals: every status it can answer besides its success."""
    return {code: {"model": ErrorOut, "description": _ERROR_MEANING[code]} for code in codes}


_BODY = (400, 413, 422)  # a route that reads a JSON body

_STATUS: dict[type[StorageError], int] = {
    NotFound: 404, Conflict: 409, Forbidden: 403, Invalid: 422, StorageError: 400,
}
"""HTTP status of each kind of refusal of the storage (a subclass answers as its base)."""


# ----------------------------------------------------------------- helpers
def _error(status: int, field: str, message: str) -> JSONResponse:
    return JSONResponse({"detail": {"field": field, "message": message}}, status_code=status)


def _json_path(loc: Iterable[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    path = ""
    for p in parts:
        path += f"[{p}]" if isinstance(p, int) else (f".{p}" if path else str(p))
    return path or "body"


class BodyLimit:
    """Refuse request bodies above ``max_bytes`` with 413 (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        message = f"request body exceeds the limit of {self.max_bytes} bytes"
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_bytes:
                    await _error(413, "body", message)(scope, receive, send)
                    return
        received = 0

        async def limited() -> Message:
            nonlocal received
            msg = await receive()
            if msg["type"] == "http.request":
                received += len(msg.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, {"field": "body", "message": message})
            return msg

        await self.app(scope, limited, send)


class _App(FastAPI):
    """FastAPI with :class:`SecurityHeaders` outside every other layer.

    Starlette's ``ServerErrorMiddleware`` is always the outermost layer of the
    stack it builds, and answers an unexpected exception (500) itself, past
    any middleware added with ``add_middleware``: wrapping the whole stack
    gives that answer the security headers too.
    """

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack())


def _top(_index: int) -> str:
    return ""


def _json_body(raw: bytes) -> Any:
    """A request body decoded as JSON: 422 naming the body if it is not JSON, 400 if undecodable."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Invalid("body", f"is not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError):  # bad UTF-8, nested too deep, an integer too long
        raise HTTPException(400, {"field": "body", "message": "cannot be decoded as JSON (UTF-8, "
                                  "nesting depth and integer length are limited)"}) from None


def _batch_items(raw: bytes) -> list[Any]:
    """The responses of a batch body, decoded and shaped as :class:`BatchIn` says."""
    data = _json_body(raw)
    if not isinstance(data, dict):
        raise Invalid("body", f'must be an object {{"responses": [...]}}; got {type(data).__name__}')
    extra = sorted(set(data) - {"responses"})
    if extra:
        raise Invalid(printable(extra[0]), "is not a field of a batch (only 'responses')")
    items = data.get("responses")
    if not isinstance(items, list):
        raise Invalid("responses", f"must be an array of responses; got {type(items).__name__}")
    return items


_bearer = HTTPBearer(auto_error=False, description="the admin token given at start-up")


def require_admin(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """401 unless ``Authorization: Bearer <token>`` matches the admin token (constant time)."""
    token: str | None = request.app.state.admin_token
    challenge = {"WWW-Authenticate": "Bearer"}
    if token is None:
        raise HTTPException(
            401, {"field": "Authorization", "message": "the admin API is disabled: start the "
                  f"server with an admin token (or set {ADMIN_TOKEN_ENV})"}, challenge,
        )
    given = "" if credentials is None else credentials.credentials
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise HTTPException(
            401, {"field": "Authorization", "message": "needs 'Bearer <admin token>' with the "
                  "server's admin token"}, challenge,
        )


_ADMIN = Depends(require_admin)


def _results_access(request: Request, survey: Survey) -> None:
    """401 unless the survey's results are public or the request presents the admin token.

    The challenge offers Basic too, so a browser asks for the token (as the password) once.
    """
    if survey.policy.results == "public":
        return
    token: str | None = request.app.state.admin_token
    if not is_token(presented_token(request), token):
        raise HTTPException(
            401, {"field": "Authorization", "message": f"the results of survey {survey.id!r} are for "
                  "its administrators (results: admin): send the admin token as 'Bearer <token>' "
                  "(or as the password of HTTP Basic authentication)"},
            {"WWW-Authenticate": f'Basic realm="{BASIC_REALM}", charset="UTF-8"'},
        )


def _page(name: str) -> Response:
    path = STATIC_DIR / name
    if not path.is_file():
        return _error(404, "path", f"the page {name} is not installed with this server")
    return FileResponse(path, media_type="text/html")


# ---------------------------------------------------------------------- app
def create_app(
    storage: Storage | str,
    surveys: Iterable[str | Path | dict[str, Any] | Survey] = (),
    *,
    admin_token: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    relay_token: str | None = None,
    trusted_proxies: Iterable[str] = (),
) -> FastAPI:
    """The collection service over ``storage`` (a Storage or a database URL).

    ``surveys`` (files, dicts or Survey objects) are stored at start-up;
    one already stored must have the same questions (its settings, such as
    the rate limit, are updated). The admin endpoints need
    ``Authorization: Bearer <admin_token>`` (default: environment variable
    ``DENIABLE_ADMIN_TOKEN``); without a token they answer 401. Batches to
    a survey open to everyone need the admin token or ``relay_token``
    (default: ``DENIABLE_RELAY_TOKEN``), which allows nothing else.

    Single responses to open surveys are rate-limited per client address
    (:mod:`deniable.server.ratelimit`): the socket peer's, or, when the peer
    is one of ``trusted_proxies`` (addresses or networks), the one its
    ``X-Forwarded-For`` names.
    """
    store = storage if isinstance(storage, Storage) else Storage(storage)
    for source in surveys:
        store.add_survey(source)
    token = admin_token if admin_token is not None else os.environ.get(ADMIN_TOKEN_ENV) or None
    relay = relay_token if relay_token is not None else os.environ.get(RELAY_TOKEN_ENV) or None
    proxies = parse_networks(trusted_proxies)
    limiter = RateLimiter()
    shuffled = Ahead()  # the results' shuffled guarantee, never computed while a read waits once stated

    app = _App(
        title="deniable collection service",
        version="1",
        summary="Surveys out, privatized (locally differentially private) reports in, "
        "estimates with error bars.",
        docs_url=None,  # served below from the package's Swagger UI files, not from a CDN
        redoc_url=None,
    )
    app.state.storage = store
    app.state.admin_token = token
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    # ----------------------------------------------------------- errors
    @app.exception_handler(StorageError)
    async def _storage_error(_request: Request, exc: StorageError) -> JSONResponse:
        status = next(_STATUS[cls] for cls in type(exc).__mro__ if cls in _STATUS)
        return _error(status, exc.field, exc.message)

    @app.exception_handler(SurveyError)
    async def _survey_error(_request: Request, exc: SurveyError) -> JSONResponse:
        return _error(422, exc.field, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        err = exc.errors()[0]
        field = _json_path(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            ctx = err.get("ctx") or {}
            return _error(422, "body", f"is not valid JSON: {ctx.get('error', err.get('msg'))}")
        message = str(err.get("msg", "invalid"))
        if err.get("type") != "missing":
            message += f"; got {err.get('input')!r:.100}"
        return _error(422, field, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc.detail, dict):
            return JSONResponse({"detail": exc.detail}, exc.status_code, headers=exc.headers)
        field = "body" if exc.status_code == 400 else "path"  # 400: FastAPI could not decode the body
        return JSONResponse(
            {"detail": {"field": field, "message": str(exc.detail)}}, exc.status_code,
            headers=exc.headers,
        )

    async def submit(
        survey_id: str, bodies: list[dict[str, Any]], where: Callable[[int], str] = _top
    ) -> SubmitResult:
        # checking and writing block (~0.1 s for a 10,000-response batch): from the thread
        # pool, so the event loop keeps answering reads meanwhile (SQLite writers queue on
        # the storage's lock; the 2xx is sent only after the commit returned)
        return await run_in_threadpool(store.submit, survey_id, bodies, where)

    # ------------------------------------------------------------ public
    @app.get("/", response_model=RootOut, tags=["devices"])
    def root() -> dict[str, Any]:
        """Where to look: surveys are not listed (a survey's id is given by whoever runs it)."""
        return {
            "service": app.title,
            "surveys": "not listed; open /s/{survey_id} (the survey page) or /s/{survey_id}/results "
            "with the id you were given",
            "api": "/docs (the OpenAPI document: /openapi.json)",
        }

    @app.get("/surveys/{survey_id}", response_model=SurveyOut, responses=_errors(404), tags=["devices"])
    def get_survey(survey_id: str) -> dict[str, Any]:
        """The survey as devices need it: each question's exact mechanism configuration."""
        return store.public(survey_id)

    @app.post(
        "/surveys/{survey_id}/responses", status_code=201, response_model=Accepted,
        responses=_errors(*_BODY, 403, 404, 409, 429), tags=["devices"],
        openapi_extra={"requestBody": {"required": True, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ResponseIn"}}}}},
    )
    async def post_response(survey_id: str, request: Request) -> dict[str, Any]:
        """Store one respondent's privatized reports (a :class:`ResponseIn`; idempotent by ``idempotency_key``).

        A retry with the same key and body gets the identical answer; the same
        key with another body is refused (409). A survey open to everyone takes
        at most its ``rate_limit`` of requests per client address (429 with
        ``Retry-After`` beyond it, answered before the body is read).
        """
        survey = store.survey(survey_id)
        limit = None if survey.invite_only else survey.policy.rate_limit
        client = ""
        if limit is not None:
            # checked before the body is read and decoded: a refused flood costs no parsing
            client = client_address(
                request.client.host if request.client else None,
                request.headers.getlist("x-forwarded-for"), proxies,
            )
            wait = limiter.take(survey.id, client, limit)
            if wait:
                raise HTTPException(
                    429, {"field": "rate_limit", "message": f"too many responses from your address: survey "
                          f"{survey.id!r} takes at most {limit.responses} per {limit.seconds:g} seconds from "
                          f"one address; try again in {retry_after(wait)} s"},
                    {"Retry-After": retry_after(wait)},
                )
        stored = 0
        try:
            body = _json_body(await request.body())
            stored = (await submit(survey_id, [body])).accepted
        finally:
            if limit is not None and not stored:  # refused, or a retry of a stored response: free
                limiter.give_back(survey.id, client, limit)
        key = body["idempotency_key"]
        return {"status": "accepted", "response_id": public_response_id(survey_id, key),
                "idempotency_key": key}

    def decode_and_submit(survey_id: str, raw: bytes) -> SubmitResult:
        return store.submit(survey_id, _batch_items(raw), lambda i: f"responses[{i}].")

    @app.post(
        "/surveys/{survey_id}/responses/batch", status_code=201, response_model=BatchAccepted,
        responses=_errors(*_BODY, 401, 403, 404, 409), tags=["devices"],
        openapi_extra={"requestBody": {"required": True, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/BatchIn"}}}}},
    )
    async def post_batch(
        survey_id: str, request: Request,
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> dict[str, Any]:
        """Store up to 10,000 responses at once (a :class:`BatchIn`); all are validated before any is stored.

        For trusted relays: a survey open to everyone needs ``Authorization:
        Bearer <token>`` with the admin token or the relay token (checked
        before the body is read); on an invite-only survey every response
        needs its own unused invite instead.
        """
        survey = store.survey(survey_id)
        if not survey.invite_only and not is_token(presented_token(request), token, relay):
            raise HTTPException(
                401, {"field": "Authorization", "message": f"survey {survey_id!r} is open to everyone: "
                      "its batches come from trusted relays only and need 'Bearer <token>' with the "
                      "admin or relay token (a respondent posts to /responses)"},
                {"WWW-Authenticate": "Bearer"},
            )
        # the body (up to 16 MB) is decoded in the thread pool too, not on the event loop
        result = await run_in_threadpool(decode_and_submit, survey_id, await request.body())
        return {"accepted": result.accepted, "duplicates": result.duplicates}

    @app.get(
        "/surveys/{survey_id}/results", response_model=ResultsOut, responses=_errors(401, 404, 422),
        tags=["analysts"],
    )
    def get_results(
        survey_id: str,
        request: Request,
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        target: Annotated[Literal["population", "respondents"], Query()] = "population",
    ) -> dict[str, Any]:
        """Debiased estimates with standard errors, 95% intervals and the Norm-Sub version.

        ``target=population`` (the default): shares in the population the
        respondents were sampled from; ``target=respondents``: shares among
        these respondents only (smaller standard errors). A survey with
        ``results: admin`` needs the admin token.
        """
        survey = store.survey(survey_id)
        _results_access(request, survey)
        aggregates = store.aggregates(survey_id)
        out = results_json(
            survey, question_estimates(survey, aggregates, target), aggregates=aggregates, ahead=shuffled,
            target=target,
        )
        if survey.rounds is not None:
            out["rounds"] = rounds_json(
                survey, store.round_aggregates(survey_id), store.device_budgets(survey_id),
                store.current_round(survey), target, ahead=shuffled,
            )
        return out

    # ------------------------------------------------------------- admin
    @app.post(
        "/admin/surveys", status_code=201, response_model=SurveyOut, responses=_errors(*_BODY, 401, 409),
        dependencies=[_ADMIN], tags=["admin"],
    )
    def create_survey(definition: dict[str, Any]) -> dict[str, Any]:
        """Store a survey definition (JSON form of the YAML file); refused over budget."""
        survey = store.add_survey(definition)
        return store.public(survey.id)

    @app.post(
        "/admin/surveys/{survey_id}/close", response_model=StatusOut, responses=_errors(401, 404),
        dependencies=[_ADMIN], tags=["admin"],
    )
    def close_survey(survey_id: str) -> dict[str, Any]:
        """Accept no new responses (retries of stored ones are still answered)."""
        store.close_survey(survey_id)
        return {"id": survey_id, "status": "closed"}

    @app.post(
        "/admin/surveys/{survey_id}/invites", response_model=InvitesOut,
        responses=_errors(*_BODY, 401, 404, 409),
        dependencies=[_ADMIN], tags=["admin"],
    )
    def create_invites(survey_id: str, body: InvitesIn) -> dict[str, Any]:
        """New single-use invite tokens for an invite-only survey (shown once, stored hashed)."""
        return {"tokens": store.create_invites(survey_id, body.count)}

    @app.get(
        "/admin/surveys/{survey_id}/export", responses=_errors(401, 404, 422), dependencies=[_ADMIN],
        tags=["admin"],
        response_class=Response,
    )
    def export(
        survey_id: str, format: Annotated[Literal["csv", "parquet"], Query()] = "csv"
    ) -> Response:
        """Every stored response (:mod:`deniable.server.export`): ``row`` (its database row
        id, in storage order) and one column per question holding the report as JSON text
        (Parquet also carries the survey definition in its metadata)."""
        survey = store.survey(survey_id)
        if format == "csv":
            return StreamingResponse(
                csv_chunks(store, survey), media_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{survey_id}.csv"'},
            )
        return Response(
            parquet_bytes(store, survey), media_type="application/vnd.apache.parquet",
            headers={"Content-Disposition": f'attachment; filename="{survey_id}.parquet"'},
        )

    # ------------------------------------------------------------- pages
    @app.get("/s/{survey_id}", include_in_schema=False)
    def survey_page(survey_id: str) -> Response:
        store.survey(survey_id)
        return _page("survey.html")

    @app.get("/s/{survey_id}/results", include_in_schema=False)
    def results_page(survey_id: str, request: Request) -> Response:
        _results_access(request, store.survey(survey_id))
        return _page("results.html")

    assets = swagger_ui_dir()

    @app.get("/docs", include_in_schema=False)
    def docs_page() -> Response:
        if assets is None:
            return _error(404, "path", "the API documentation needs the server extra's Swagger UI: "
                          "pip install 'deniable[server]'")
        return _page("docs.html")

    @app.get("/docs/assets/{name}", include_in_schema=False)
    def docs_asset(name: str) -> Response:
        if assets is None or name not in DOCS_ASSETS:
            return _error(404, "path", f"no such file; the documentation's files are {list(DOCS_ASSETS)}")
        media = "text/css" if name.endswith(".css") else "text/javascript"
        return FileResponse(assets / name, media_type=media, headers={"Cache-Control": "public, max-age=86400"})

    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    _document_schemas(app, ResponseIn, BatchIn)
    return app


def _document_schemas(app: FastAPI, *models: type[BaseModel]) -> None:
    """Add to the OpenAPI components the models that document bodies FastAPI does not validate."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schemas = generate()["components"]["schemas"]
            for model in models:
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                schemas.update(schema.pop("$defs", {}))
                schemas[model.__name__] = schema
        return generate()  # the cached document, now with the models

    app.openapi = openapi  # type: ignore[method-assign]
