"""The results of each kind of question, typed for the OpenAPI document (one model per kind of question).

:class:`deniable.server._answers.ResultsOut` lists a survey's questions as these.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "SupportCountsOut",
    "DetectionOut",
    "ManipulationOut",
    "SequenceOut",
    "QuestionResult",
    "DesignParameter",
    "DesignResult",
    "PlainResult",
    "DiscoveredValue",
    "DiscoveryResult",
    "MeanResult",
    "JointPartOut",
    "JointPairOut",
    "JointResult",
    "CdfOut",
    "QuantileOut",
    "RangeResult",
    "ItemsResult",
    "ListCounts",
    "ListResult",
    "KeyValueResult",
]


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


class KeyValueResult(BaseModel):
    """A key-value question (PCKV): each key's share of respondents holding it and the mean of its values."""

    id: str
    text: str
    type: Literal["keyvalue"]
    kind: Literal["keyvalue"]
    mechanism: str = Field(description="PCKV-UE or PCKV-GRR")
    epsilon: float
    n: int
    target: Literal["population"]
    level: float
    keys: list[Any]
    low: float = Field(description="the smallest value")
    high: float = Field(description="the largest value")
    units: str | None = None
    max_pairs: int = Field(description="the most keys one respondent gives values for")
    ell: int = Field(description="pairs padded and sampled to ell (unbiased when nobody holds more keys)")
    estimate: list[float | None] | None = Field(description="each key's share of respondents holding it (need not "
                                                "add up to 1); null without reports")
    std_error: list[float | None] | None
    ci_low: list[float | None] | None = Field(description="normal interval at level")
    ci_high: list[float | None] | None
    mean: list[float | None] | None = Field(description="each key's mean value among its holders, in [low, high]")
    mean_std_error: list[float | None] | None = Field(description="by the delta method")
    mean_ci_low: list[float | None] | None = Field(description="normal interval at level, clipped to [low, high]")
    mean_ci_high: list[float | None] | None


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
