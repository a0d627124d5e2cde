"""The administrators' routes: creating and closing surveys, and invites (every one needs the admin token)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from deniable.server._answers import InvitesOut, StatusOut, SurveyOut
from deniable.server._bodies import InvitesIn, SurveyIn, openapi_body
from deniable.server._refusals import BODY, errors
from deniable.server._routes.service import Service
from deniable.server._security import ADMIN

__all__ = ["router"]


def router(service: Service) -> APIRouter:
    """``POST /admin/surveys``, ``.../{id}/close`` and ``.../{id}/invites``."""
    store = service.store
    api = APIRouter(tags=["admin"], dependencies=[ADMIN])

    @api.post(
        "/admin/surveys", status_code=201, response_model=SurveyOut, responses=errors(*BODY, 401, 409),
        openapi_extra=openapi_body(SurveyIn),
    )
    def create_survey(definition: dict[str, Any]) -> dict[str, Any]:
        """Store a survey definition (a :class:`SurveyIn`: the JSON form of the YAML file); refused over budget."""
        survey = store.add_survey(definition)
        return store.public(survey.id)

    @api.post("/admin/surveys/{survey_id}/close", response_model=StatusOut, responses=errors(401, 404))
    def close_survey(survey_id: str) -> dict[str, Any]:
        """Accept no new responses (retries of stored ones are still answered)."""
        store.close_survey(survey_id)
        return {"id": survey_id, "status": "closed"}

    @api.post(
        "/admin/surveys/{survey_id}/invites", response_model=InvitesOut, responses=errors(*BODY, 401, 404, 409),
    )
    def create_invites(survey_id: str, body: InvitesIn) -> dict[str, Any]:
        """New single-use invite tokens for an invite-only survey (shown once, stored hashed)."""
        return {"tokens": store.create_invites(survey_id, body.count)}

    return api
