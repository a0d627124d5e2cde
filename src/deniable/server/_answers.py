"""The answers of the HTTP API, typed for the OpenAPI document (FastAPI checks each against its model).

Refusals are :class:`deniable.server._refusals.ErrorOut`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

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
    type: Literal["yes-no", "categorical", "integer", "free-text", "number", "joint", "multiple", "list-experiment"]
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
    questions: list[dict[str, Any]] | None = Field(
        default=None, description="a joint question's parts ({id, text, categories}), answered as one list"
    )
    options: list[Any] | None = Field(default=None, description="a multiple question's options, in order")
    max_choices: int | None = Field(default=None, description="the most options a multiple question's answer holds")
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


class SupportCountsOut(BaseModel):
    fingerprint: str = Field(description="fingerprint of the mechanism configuration")
    n: int = Field(description="number of reports")
    counts: list[int] = Field(description="reports supporting each category (C_v)")


class DetectionOut(BaseModel):
    """A detection test's outcome (deniable.Detection.to_dict)."""

    test: str
    statistic: float | None = Field(description="the test statistic; null where not finite (a share with no spread)")
    p_value: float = Field(description="probability of a statistic this extreme were every response honest")
    alpha: float = Field(description="the false-alarm rate the test was run at")
    flagged: bool = Field(description="p_value <= alpha: the shares look pushed by fake responses")
    items: list[Any] = Field(description="the categories the test points at")


class ManipulationOut(BaseModel):
    """How far fake responses could move the shares, and whether they look pushed."""

    per_fake_report: float = Field(description="the most one fake response among the n moves a share")
    sensitivity: float = Field(description="the most one chosen report raises a share from 0, times n")
    frequency_test: DetectionOut = Field(description="a share significantly below 0 (honest shares are >= 0)")
    change_from_previous_round: DetectionOut | None = Field(
        default=None, description="rounds only: shares that moved since the last earlier round beyond sampling "
        "(null for the first round)")


class SequenceOut(BaseModel):
    """The estimate from every round so far and its anytime-valid interval (rounds: {anytime: true})."""

    n: int = Field(ge=1, description="reports of every round so far")
    estimate: list[float | None] | float | None
    ci_low: list[float | None] | float | None = Field(description="covers at every round at once with "
                                                      "probability 1 - alpha")
    ci_high: list[float | None] | float | None
    alpha: float
    planned_n: int


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
    manipulation: ManipulationOut | None = Field(
        default=None, description="frequency oracles with responses: what fake responses could do, and a check"
    )


class DesignParameter(BaseModel):
    name: str = Field(description='"pi" (the prevalence), then a two-group design\'s extra parameter')
    estimate: float | None
    std_error: float | None = Field(description="standard error (sampling model, as RRreg's RRuni)")
    ci_low: float | None = Field(description="profile-likelihood interval at the results' level")
    ci_high: float | None


class DesignResult(BaseModel):
    """A design question's prevalence."""

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
    """A free-text question's discovered values."""

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
    """A number question's estimated mean."""

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


class JointPartOut(BaseModel):
    """One part of a joint question: its shares (a marginal of the joint estimate)."""

    id: str
    text: str
    categories: list[Any]
    estimate: list[float | None] | None
    std_error: list[float | None] | None
    ci_low: list[float | None] | None
    ci_high: list[float | None] | None


class JointPairOut(BaseModel):
    """Two parts of a joint question: the Wald test of independence and Cramér's V."""

    first: str
    second: str
    statistic: float | None
    df: int
    p_value: float | None
    cramers_v: float | None
    cramers_v_std_error: float | None


class JointResult(BaseModel):
    """A joint question (type: joint): each part's shares and every pair's association."""

    id: str
    text: str
    type: Literal["joint"]
    kind: Literal["joint"]
    mechanism: str = Field(description="the oracle on the product of the parts' answers")
    epsilon: float
    n: int
    target: Literal["population"]
    level: float
    questions: list[JointPartOut]
    pairs: list[JointPairOut]


class CdfOut(BaseModel):
    """A range question's estimated CDF at points of [low, high], with the pointwise interval."""

    x: list[float]
    estimate: list[float | None] = Field(description="the share of answers below x (unbiased, binned answers)")
    std_error: list[float | None]
    ci_low: list[float | None] = Field(description="pointwise normal interval at level, clipped to [0, 1]")
    ci_high: list[float | None]


class QuantileOut(BaseModel):
    """A quantile with the interval inverted from the CDF's pointwise band."""

    q: float
    estimate: float | None
    std_error: float | None = Field(description="half the width of the interval inverted from the +-1 SE band")
    ci_low: float | None
    ci_high: float | None


class RangeResult(BaseModel):
    """A number question collected by a range mechanism (hierarchical, haar): its CDF and quantiles."""

    id: str
    text: str
    type: Literal["number"]
    kind: Literal["range"]
    mechanism: str = Field(description="mechanism class name")
    epsilon: float = Field(description="one report's epsilon")
    n: int
    target: Literal["population"]
    level: float
    low: float
    high: float
    bins: int = Field(description="equal bins of [low, high] the mechanism resolves")
    units: str | None
    cdf: CdfOut | None = Field(description="null without reports")
    quantiles: list[QuantileOut] | None = Field(description="null without reports")
    aggregate: dict[str, Any] = Field(description="the merged SupportCounts (each level's count, then its counts)")


class ItemsResult(BaseModel):
    """A multiple question (choose several): each option's share of respondents who chose it."""

    id: str
    text: str
    type: Literal["multiple"]
    kind: Literal["items"]
    mechanism: str = Field(description="the oracle on the options and the ell dummies")
    epsilon: float
    n: int
    target: Literal["population"]
    level: float
    options: list[Any]
    max_choices: int
    ell: int = Field(description="sets padded and sampled to ell entries (unbiased when no set is longer)")
    estimate: list[float | None] | None = Field(description="shares need not add up to 1; null without reports")
    std_error: list[float | None] | None
    ci_low: list[float | None] | None = Field(description="normal interval at level")
    ci_high: list[float | None] | None


class ListCounts(BaseModel):
    control: list[int] = Field(description="respondents of the control list answering 0, 1, ..., J")
    treatment: list[int] = Field(description="respondents of the treatment list answering 0, 1, ..., J + 1")


class ListResult(BaseModel):
    """A list experiment (type: list-experiment): the difference in means of the two lists."""

    id: str
    text: str
    type: Literal["list-experiment"]
    kind: Literal["list-experiment"]
    randomized: Literal[False]
    epsilon: None = Field(description="infinite: the floor and the ceiling of the longer list reveal the answer")
    reveals_truth: Literal[True]
    items: list[str]
    sensitive: str
    J: int = Field(description="the number of control items")
    n: int
    n_control: int
    n_treatment: int
    floor: int = Field(description="treatment respondents answering 0: each said no to the sensitive item")
    ceiling: int = Field(description="treatment respondents answering J + 1: each said yes to it")
    counts: ListCounts
    estimate: float | None = Field(description="the share holding the sensitive item: mean(treatment) - "
                                   "mean(control); null with fewer than 2 respondents in a list")
    std_error: float | None = Field(description="sqrt(s1^2 / n1 + s0^2 / n0)")
    ci_low: float | None
    ci_high: float | None
    level: float


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
        | ItemsResult | ListResult
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
        | ItemsResult | ListResult
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
