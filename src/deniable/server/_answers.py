"""The answers of the HTTP API, typed for the OpenAPI document (FastAPI checks each against its model).

Refusals are :class:`deniable.server._refusals.ErrorOut`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from deniable.server._question_answers import (
    DesignResult,
    DiscoveryResult,
    ItemsResult,
    JointResult,
    KeyValueResult,
    ListResult,
    MeanResult,
    PlainResult,
    QuestionResult,
    RangeResult,
    SequenceOut,
)

__all__ = [
    "Accepted", "BatchAccepted", "Queued", "QuestionOut", "RoundsOut", "TransportOut", "SurveyOut", "ResultsOut",
    "InvitesOut", "RootOut", "StatusOut", "ShufflerOut",
]


class Accepted(BaseModel):
    status: Literal["accepted"]
    response_id: str = Field(description="opaque receipt; reveals nothing about other responses")
    idempotency_key: str


class BatchAccepted(BaseModel):
    accepted: int = Field(description="responses stored by this request")
    duplicates: int = Field(description="responses whose key was already stored with this body")


class Queued(BaseModel):
    """A shuffling relay's receipt (``deniable relay --shuffle``): the response is on the relay's disk, not stored yet.

    The relay answers for the collector, which has not seen the response:
    it reaches the collector later, in a shuffled batch, and the collector's
    own receipt (:class:`Accepted`) never comes back to the device.
    """

    status: Literal["queued"]
    stored: Literal[False] = Field(description="false: the collector has not stored the response yet")
    threshold: int = Field(description="the relay forwards a batch only once it holds at least this many responses")
    max_delay: float = Field(description="then after a random delay of at most this many seconds")


class QuestionOut(BaseModel):
    id: str
    text: str
    type: Literal["yes-no", "categorical", "integer", "free-text", "number", "joint", "multiple", "list-experiment",
                  "keyvalue"]
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
    low: float | None = Field(default=None, description="a number (or keyvalue) question's smallest answer")
    high: float | None = Field(default=None, description="a number (or keyvalue) question's largest answer")
    units: str | None = Field(default=None, description="a number (or keyvalue) question's units (text)")
    questions: list[dict[str, Any]] | None = Field(
        default=None, description="a joint question's parts ({id, text, categories}), answered as one list"
    )
    options: list[Any] | None = Field(default=None, description="a multiple question's options, in order")
    max_choices: int | None = Field(default=None, description="the most options a multiple question's answer holds")
    keys: list[Any] | None = Field(default=None, description="a keyvalue question's declared keys, in order")
    max_pairs: int | None = Field(default=None, description="the most keys a keyvalue answer gives values for")
    items: list[str] | None = Field(default=None, description="a list experiment's control items")
    sensitive: str | None = Field(
        default=None, description="a list experiment's sensitive item, shown to the treatment group only"
    )


class RoundsOut(BaseModel):
    """A survey's rounds (deniable.server._rounds)."""

    every: int = Field(description="length of a round in seconds")
    lifetime_epsilon: float = Field(description="the most one device may spend over all rounds")
    start: str = Field(description="when round 0 starts (ISO-8601 UTC)")


class TransportOut(BaseModel):
    kind: Literal["ohttp"]
    relay: str = Field(description="the relay's URL: POST message/ohttp-req to it; its key configuration at "
                       "<relay>/ohttp-keys")
    shuffler: bool = Field(default=False, description="the relay holds, shuffles and forwards reports in batches "
                           "(answering 202 queued); the service takes this survey's responses from them only")


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
    transport: TransportOut | None = Field(
        default=None, description="absent when devices post directly; else post encapsulated (Oblivious HTTP, "
        "RFC 9458) through this relay to the service's gateway"
    )
    questions: list[QuestionOut]


class ShuffledOut(BaseModel):
    """The central guarantee of the responses if collected through a trusted shuffler."""

    n: int = Field(description="responses")
    epsilon_local: float = Field(description="each response's epsilon (the survey's epsilon_total)")
    epsilon: float = Field(description="central epsilon of the shuffled responses (Feldman, McMillan & Talwar)")
    delta: float = Field(description="min(1e-6, n^-1.1)")


class ShufflerOut(BaseModel):
    """The shuffled batches a survey collected through a shuffler (``transport.shuffler``) really came in."""

    batches: int = Field(description="shuffled batches that stored responses of this survey")
    smallest: int = Field(description="this survey's responses in the smallest batch")
    largest: int = Field(description="this survey's responses in the largest batch")
    responses: int = Field(description="responses stored from shuffled batches (all: the survey takes no other)")
    epsilon: float | None = Field(description="central epsilon for the smallest batch (null without a batch)")
    delta: float | None = Field(description="min(1e-6, smallest^-1.1)")


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


class RefusalsOut(BaseModel):
    """Refused posts of responses by kind (one per request, a batch being one; deniable.server._refusal_counts)."""

    rate_limited: int = Field(ge=0, description="429: over the per-address rate_limit")
    conflict: int = Field(ge=0, description="409: a reused key with another body, a closed or full survey, a "
                          "device's second response in a round")
    forbidden: int = Field(ge=0, description="401 and 403: no valid relay token or invite, a device over its "
                           "lifetime_epsilon, a cross-site or unshuffled post")
    invalid: int = Field(ge=0, description="any other 4xx but 404: a malformed request")


class RoundResult(BaseModel):
    round: int
    start: str = Field(description="ISO-8601 UTC")
    end: str
    n_responses: int = Field(ge=0)
    shuffled: ShuffledOut | None = Field(description="this round's responses (one per device) if shuffled")
    shuffler: ShufflerOut | None = Field(
        default=None, description="null unless the survey is collected through a shuffling relay: then the "
        "batches this round's responses came in (a batch served across a round's end counts in neither round), "
        "and the guarantee for the smallest; it holds for the round only where responses equals n_responses")
    questions: list[
        QuestionResult | DesignResult | PlainResult | DiscoveryResult | MeanResult | JointResult | RangeResult
        | ItemsResult | ListResult | KeyValueResult
    ]
    sequences: dict[str, SequenceOut | None] | None = Field(
        default=None, description="rounds with anytime: true: per frequency question, the confidence sequence of "
        "every round so far (null for a memoizing question, or before its first report)")
    refusals: RefusalsOut | None = Field(default=None, description="the posts refused during this round")


class RoundsWindow(BaseModel):
    """Which rounds the results list (query parameter ``rounds``)."""

    rounds: str = Field(description="as asked: 'last:N' or 'A:B'")
    first: int = Field(ge=0, description="the first round of the window")
    stop: int = Field(ge=0, description="the round after the window's last (the window is empty if stop <= first)")
    n_rounds: int = Field(ge=0, description="the rounds with responses, in all; page with rounds=A:B")


class RoundsResult(BaseModel):
    """The results of each round of a survey with rounds, and its devices' spent budgets."""

    every: int
    lifetime_epsilon: float
    start: str
    current_round: int | None
    devices: DeviceBudgets
    rounds: list[RoundResult] = Field(description="every round of the window with responses, in order")
    window: RoundsWindow
    anytime: bool = Field(default=False, description="each round's questions carry a confidence sequence")
    planned_n: int | None = Field(default=None, description="with anytime: the reports the sequences are tuned for")


class DefencesOut(BaseModel):
    """The survey's flood defences, beside each question's manipulation figures."""

    invite_only: bool
    rate_limit: dict[str, Any] | None = Field(description="per client address; null when off or invite-only")
    max_responses: int | None = Field(description="the cap on stored responses (null: none)")
    n_responses: int = Field(description="responses stored")
    detection_alpha: float = Field(description="the false-alarm rate of every detection in these results")
    refusals: RefusalsOut | None = Field(default=None, description="the posts of responses refused, over every "
                                         "round (a flood meeting the defences)")


class SliceOut(BaseModel):
    """One slice of a sliced question: the plain answer, its respondents and the estimate from their reports."""

    value: Any = Field(description="the answer to the by question")
    n: int = Field(ge=0, description="respondents who gave it and answered the sliced question")
    small: bool = Field(description="n < min_n: too few reports for the interval to say much")
    estimate: list[float | None] | float | None = Field(description="per category (shares) or the mean")
    std_error: list[float | None] | float | None
    ci_low: list[float | None] | float | None
    ci_high: list[float | None] | float | None


class SlicedQuestionOut(BaseModel):
    id: str
    text: str
    type: str = Field(description="the question's type (yes-no, categorical, number)")
    kind: Literal["shares", "mean"]
    mechanism: str
    epsilon: float
    min_n: int = Field(description="max(30, the reports a 95% interval needs to be within ±0.1 on a share, "
                       "or 10% of the range for a mean), worst case over the truth")
    categories: list[Any] | None = None
    slices: list[SliceOut]


class SlicedOut(BaseModel):
    """The results by the answers of a plain question (?by=)."""

    question: str = Field(description="the plain question the respondents are sliced by")
    text: str
    values: list[Any] = Field(description="its allowed answers, one slice each")
    questions: list[SlicedQuestionOut]


class ResultsOut(BaseModel):
    id: str
    title: str
    allocation: Literal["split", "sample"] = Field(
        description="split: every response answers every question; sample: one random question each"
    )
    n_responses: int = Field(ge=0)
    shuffled: ShuffledOut | None = Field(
        description="null for an infinite epsilon_total or plain (unrandomized) questions; for a survey "
        "with rounds it is per round (rounds.rounds[].shuffled). What shuffling would give these responses; "
        "it holds only where they came through a shuffler: see shuffler"
    )
    shuffler: ShufflerOut | None = Field(
        default=None, description="null unless the survey is collected through a shuffling relay: then the "
        "batches its responses really came in, and the guarantee for the smallest"
    )
    target: Literal["population", "respondents"]
    level: float = Field(gt=0, lt=1)
    questions: list[
        QuestionResult | DesignResult | PlainResult | DiscoveryResult | MeanResult | JointResult | RangeResult
        | ItemsResult | ListResult | KeyValueResult
    ]
    rounds: RoundsResult | None = Field(default=None, description="surveys with rounds only")
    defences: DefencesOut | None = Field(default=None, description="what bounds the number of fake responses")
    by: SlicedOut | None = Field(default=None, description="with ?by=QUESTION only: each frequency and number "
                                 "question estimated per answer of that plain question")


class InvitesOut(BaseModel):
    tokens: list[str]


class RootOut(BaseModel):
    service: str
    surveys: str = Field(description="surveys are not listed; where to open one")
    api: str


class StatusOut(BaseModel):
    id: str
    status: Literal["open", "closed"]
