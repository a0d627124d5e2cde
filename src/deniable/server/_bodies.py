"""The request bodies of the HTTP API, typed once for the OpenAPI document.

Each model is the schema of one body; each body is checked by one
validator, with the messages the service answers (a 422 naming the field and
the expected value):

* :class:`ResponseIn` and :class:`BatchIn` by
  :func:`deniable.server._submissions.prepare`, whose constants
  (:data:`~deniable.server._submissions.KEY_PATTERN`,
  :data:`~deniable.server._submissions.MAX_TOKEN_LENGTH`,
  :data:`~deniable.server._rounds.DEVICE_PATTERN`, :data:`deniable.wire.MAX_BATCH`)
  the models are built from: a batch of 10,000 responses is checked per
  question through each mechanism instead of being built into 10,000 models
  first, and a single response after the rate limit;
* :class:`InvitesIn` by :meth:`deniable.server._storage.Storage.create_invites`
  (after the survey's own refusals: no such survey, not invite-only);
* :class:`SurveyIn` by :func:`deniable.server._surveys.load_survey`, which
  knows every mechanism's parameters (the schema is loose there).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from deniable.server._rounds import DEVICE_PATTERN
from deniable.server._submissions import KEY_PATTERN, MAX_TOKEN_LENGTH
from deniable.server._surveys import ID_PATTERN
from deniable.wire import MAX_BATCH

__all__ = ["ResponseIn", "BatchIn", "InvitesIn", "SurveyIn", "DOCUMENTED", "openapi_body"]

IdempotencyKey = Annotated[str, StringConstraints(pattern=f"^{KEY_PATTERN.pattern}$")]


class ResponseIn(BaseModel):
    """One respondent's privatized reports, one per question.

    This model documents the request body; the body is decoded after the
    rate limit and checked (once) by :func:`deniable.server._submissions.prepare`,
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
    wire_version: Literal[1, 2] = Field(
        default=1, description="the wire version of the reports (deniable.wire): 1, or 2 where the wide "
        "report fields (an OLH/BLH seed, RAPPOR's bits) are decimal strings; stored alike"
    )
    reports: dict[str, Any] = Field(
        description="{question id: report JSON}, every question exactly once; the report "
        "format is the question's mechanism's (m.reports_to_json(reports, wire_version=...))"
    )


class BatchIn(BaseModel):
    """1 to 10,000 responses, each a :class:`ResponseIn`.

    This model documents the request body; the body is decoded in the thread
    pool and checked once by :func:`deniable.server._submissions.prepare`
    (paths like ``responses[3].idempotency_key``) instead of being built into
    10,000 models first.
    """

    model_config = ConfigDict(extra="forbid")

    responses: list[ResponseIn] = Field(min_length=1, max_length=MAX_BATCH)
    wire_version: Literal[1, 2] = Field(
        default=1, description="the wire version of the responses' reports, for each response that names none"
    )


class InvitesIn(BaseModel):
    """How many invites to make (checked by :meth:`Storage.create_invites`)."""

    model_config = ConfigDict(extra="forbid")

    count: Any = Field(json_schema_extra={"type": "integer", "minimum": 1, "maximum": MAX_BATCH})


class SurveyIn(BaseModel):
    """A survey definition: the JSON form of the YAML file (see the guide to survey files).

    Loose where the loader is exact: each question's fields depend on its
    type and mechanism or design, and the loader names any it refuses.
    """

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, StringConstraints(pattern=ID_PATTERN.pattern)] = Field(
        description="the survey's id: 1-64 characters [A-Za-z0-9_.-], starting with a letter or digit"
    )
    title: str = Field(description="the survey's title, shown to respondents")
    budget: float = Field(description="the most the questions' epsilons may add up to (per respondent)")
    questions: list[dict[str, Any]] = Field(
        min_length=1, description="each {id, text, type, ...} with a mechanism, a design, or randomized: false"
    )
    description: str | None = Field(default=None, description="a longer description of the survey")
    invite_only: bool = Field(default=False, description="every response needs an unused invite token")
    allocation: Literal["split", "sample"] = Field(
        default="split", description="split: answer every question; sample: one question drawn per device"
    )
    rounds: dict[str, Any] | None = Field(
        default=None, description="{every, lifetime_epsilon, start}: ask the same devices once per round"
    )
    rate_limit: dict[str, Any] | Literal["off", False] | None = Field(
        default=None, description="{responses, seconds} per client address, or off"
    )
    max_responses: int | None = Field(default=None, ge=1, description="the most responses stored")
    results: Literal["public", "admin"] = Field(default="public", description="who may read the results")
    embed: dict[str, Any] | None = Field(
        default=None, description="{origins: [https://host[:port], ...]}: the sites that may frame the survey's "
        "page and fetch it and post responses from the browser (CORS)",
    )


DOCUMENTED = (ResponseIn, BatchIn, SurveyIn)
"""The bodies FastAPI does not decode itself: the app adds their schemas to the OpenAPI document."""


def openapi_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads the body ``model`` (one of :data:`DOCUMENTED`) itself."""
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}
