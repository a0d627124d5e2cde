"""The analysts' routes: the results (debiased estimates) and the export of every stored response."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials

from deniable.server._answers import ResultsOut
from deniable.server._export import csv_chunks, parquet_bytes
from deniable.server._refusals import errors
from deniable.server._results import anytime_json, question_estimates, results_json, with_refusals
from deniable.server._round_window import DEFAULT_WINDOW, MAX_WINDOW, parse_window, window_json
from deniable.server._routes.service import Service
from deniable.server._security import ADMIN, bearer, results_access
from deniable.server._sequence_results import window_sequences
from deniable.server._sliced_results import sliced_json

__all__ = ["router"]


def router(service: Service) -> APIRouter:
    """``GET /surveys/{id}/results`` and ``GET /admin/surveys/{id}/export`` (the admin's)."""
    store = service.store
    api = APIRouter()

    @api.get(
        "/surveys/{survey_id}/results", response_model=ResultsOut, responses=errors(401, 404, 422),
        tags=["analysts"],
    )
    def get_results(
        survey_id: str,
        request: Request,
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
        target: Annotated[Literal["population", "respondents"], Query()] = "population",
        rounds: Annotated[str, Query(
            description="a survey in rounds: which rounds to list, 'last:N' (the N rounds up to the current "
            f"one) or 'A:B' (rounds A to B - 1), at most {MAX_WINDOW}; rounds without responses are left out, "
            "and the answer's rounds.window says how many rounds have responses",
            examples=["last:52", "0:100"],
        )] = DEFAULT_WINDOW,
        by: Annotated[str | None, Query(max_length=200)] = None,
    ) -> dict[str, Any]:
        """Debiased estimates with standard errors, 95% intervals and the Norm-Sub version.

        ``target=population`` (the default): shares in the population the
        respondents were sampled from; ``target=respondents``: shares among
        these respondents only (smaller standard errors). A survey with
        ``results: admin`` needs the admin token. ``by=QUESTION`` (a plain
        question's id) adds ``by``: every frequency and number question
        estimated per answer of that question, with each slice's respondent
        count and whether it is too small for its interval to say much (read
        from the stored responses: slower than the rest, which come from the
        aggregates).
        """
        survey = store.survey(survey_id)
        results_access(request, survey)
        aggregates = store.aggregates(survey_id)
        refusals = store.refusals.counts(survey_id)
        out = results_json(
            survey, question_estimates(survey, aggregates, target), aggregates=aggregates,
            ahead=service.shuffled, target=target,
            batches=store.shuffled_batches(survey_id) if survey.policy.transport.shuffler else (),
            refusals=refusals,
        )
        if survey.rounds is not None:
            current = store.current_round(survey)
            window = parse_window(rounds, current)
            listed = window_json(
                survey, store.round_stats(survey_id, window.first, window.stop), current, window,
                store.count_rounds(survey_id), target, ahead=service.shuffled, cache=service.rounds,
                batches=store.round_batches(survey_id, window.first, window.stop)
                if survey.policy.transport.shuffler else None,
            )
            if survey.rounds.anytime:  # a sequence reads every round from the first
                window_sequences(survey, store.round_aggregates(survey_id), listed["rounds"], out["level"])
            listed["rounds"] = with_refusals(listed["rounds"], refusals)
            out["rounds"] = {
                **survey.rounds.to_json(), **anytime_json(survey), "current_round": current,
                "devices": store.device_budgets(survey_id), **listed,
            }
        if by is not None:
            out["by"] = sliced_json(survey, store.iter_responses(survey_id), by, target, out["level"])
        return out

    @api.get(
        "/admin/surveys/{survey_id}/export", responses=errors(401, 404, 422), dependencies=[ADMIN],
        tags=["admin"],
        response_class=Response,
    )
    def export(
        survey_id: str, format: Annotated[Literal["csv", "parquet"], Query()] = "csv"
    ) -> Response:
        """Every stored response (:mod:`deniable.server._export`): ``row`` (its database row
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

    return api
