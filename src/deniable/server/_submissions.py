"""Checking a request of responses before anything is stored.

A response is ``{"idempotency_key", "invite_token" (optional), "device"
(surveys with rounds only), "wire_version" (optional), "reports"}`` with one
report per question of the survey. ``wire_version`` (1, the default, or 2)
is the wire version of its reports (:mod:`deniable.wire`): in version 2 the
wide report fields (an OLH/BLH ``seed``, RAPPOR's ``bits``) are decimal
strings, read here as integers; every response is stored in version 1, so
the same reports posted in either version store the same text, body hash
and aggregates. :func:`prepare` checks every
response of a request (one, or a batch of up to :data:`MAX_BATCH`), each
question's reports at once through its mechanism (``reports_from_json``,
which checks them once and names the first bad one), and returns what the
storage writes: the canonical reports text and body hash per response, and
the checked reports per question for the aggregates.

Under ``allocation: sample`` a response carries exactly one report, for the
question its device drew; each question's checked reports then hold only
the responses that answered it (``Prepared.answered``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deniable.errors import ReportError
from deniable.server._errors import Invalid, is_text, printable
from deniable.server._rounds import DEVICE_PATTERN
from deniable.server._surveys import Survey
from deniable.wire import MAX_BATCH, WIRE_VERSIONS
from deniable.wire._codecs import from_version

__all__ = ["KEY_PATTERN", "MAX_TOKEN_LENGTH", "Prepared", "prepare", "token_hash", "check_wire_version"]

KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,128}")
"""Idempotency keys: chosen by the device, 8-128 URL-safe characters."""

MAX_TOKEN_LENGTH = 256
"""Longest invite token accepted (the server issues 32 characters)."""

BODY_FIELDS = frozenset({"idempotency_key", "invite_token", "device", "wire_version", "reports"})
"""The fields of a response."""


@dataclass(frozen=True)
class Prepared:
    """A checked request, aligned by response (lists) or by question (``reports``)."""

    keys: list[str]
    tokens: list[str | None]  # SHA-256 of the invite tokens
    texts: list[str]  # canonical reports JSON per response
    hashes: list[str]  # body hash per response (reports and invite token)
    reports: dict[str, Any]  # checked reports per question id, one per response answering it
    answered: dict[str, list[int]] | None = None  # sampled surveys: the responses answering each question
    devices: list[str] | None = None  # surveys with rounds: each response's device key (never stored)

    def rows(self, question_id: str, responses: Sequence[int] | None) -> list[int] | None:
        """Positions in ``reports[question_id]`` of the responses ``responses`` (None: all of them)."""
        if responses is None:
            return None
        if self.answered is None:
            return list(responses)
        wanted = set(responses)
        return [row for row, response in enumerate(self.answered[question_id]) if response in wanted]


def token_hash(text: str) -> str:
    """SHA-256 (hex) of ``text``: how invite tokens and response bodies are stored."""
    return hashlib.sha256(text.encode()).hexdigest()


def _check_body(survey: Survey, body: Mapping[str, Any], where: str) -> None:
    """Invalid naming the first bad field of one response (``where`` is its path prefix)."""
    if not isinstance(body, Mapping):
        raise Invalid(where.rstrip(".") or "body", f"must be an object (a response); got {type(body).__name__}")
    key = body.get("idempotency_key")
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise Invalid(
            f"{where}idempotency_key",
            f"must be 8-128 characters of A-Z a-z 0-9 _ -; got {key!r:.140}",
        )
    token = body.get("invite_token")
    if token is not None and (
        not isinstance(token, str) or not 1 <= len(token) <= MAX_TOKEN_LENGTH or not is_text(token)
    ):
        raise Invalid(
            f"{where}invite_token",
            f"must be a string of 1-{MAX_TOKEN_LENGTH} Unicode characters; got {token!r:.60}",
        )
    if len(body) > 2 and not body.keys() <= BODY_FIELDS:
        extra = sorted(set(body) - BODY_FIELDS)[0]
        raise Invalid(f"{where}{printable(extra)}", f"is not a field of a response {sorted(BODY_FIELDS)}")
    _check_device(survey, body.get("device"), where)
    check_wire_version(body.get("wire_version", 1), f"{where}wire_version")
    reports = body.get("reports")
    if not isinstance(reports, Mapping):
        raise Invalid(f"{where}reports", "must be an object {question id: report}")
    question_ids = [q.id for q in survey.questions]
    if survey.allocation == "sample":
        if len(reports) != 1 or not reports.keys() <= set(question_ids):
            raise Invalid(
                f"{where}reports", f"must hold exactly one report, for the question this device drew at "
                f"random (survey {survey.id!r} has allocation: sample; questions: {question_ids}); "
                f"got {sorted(reports)!r:.200}"
            )
        return
    if reports.keys() != set(question_ids):
        for qid in question_ids:
            if qid not in reports:
                raise Invalid(
                    f"{where}reports.{qid}",
                    f"is missing: every question of survey {survey.id!r} is answered exactly "
                    f"once (questions: {question_ids})",
                )
        extra = sorted(set(reports) - set(question_ids))[0]
        raise Invalid(
            f"{where}reports.{printable(extra)}",
            f"is not a question of survey {survey.id!r} (questions: {question_ids})",
        )


def check_wire_version(version: Any, field: str) -> None:
    """Invalid naming ``field`` unless ``version`` is a wire version (1 or 2)."""
    if isinstance(version, bool) or version not in WIRE_VERSIONS:
        raise Invalid(
            field, f"must be {' or '.join(map(str, WIRE_VERSIONS))} (the wire version of the reports; "
            f"default 1); got {version!r:.60}"
        )


def _version_1(randomizer: Any, values: list[Any], versions: list[int]) -> list[Any]:
    """One question's reports as version 1 has them (each of its response's wire version):
    :class:`~deniable.errors.ReportError` at its position if a wide field is not a decimal string."""
    wide = getattr(randomizer, "wide_fields", ())
    if not wide or 2 not in versions:
        return values
    out = []
    for j, (value, version) in enumerate(zip(values, versions, strict=True)):
        try:
            out.append(from_version([value], wide, version, randomizer.name)[0])
        except ReportError as exc:
            raise ReportError(str(exc), j, exc.reason) from None
    return out


def _check_device(survey: Survey, device: Any, where: str) -> None:
    """Invalid naming ``device``: required with rounds, refused without (the key is never echoed)."""
    if survey.rounds is None:
        if device is not None:
            raise Invalid(
                f"{where}device", f"is only for surveys with rounds; survey {survey.id!r} has none, so "
                "leave the device key out"
            )
        return
    if device is None:
        raise Invalid(
            f"{where}device", f"is required: survey {survey.id!r} runs in rounds and counts each device's "
            "privacy loss; send the device's key (22-128 characters of A-Z a-z 0-9 _ -)"
        )
    if not isinstance(device, str) or not DEVICE_PATTERN.fullmatch(device):
        got = f"a string of {len(device)} characters" if isinstance(device, str) else type(device).__name__
        raise Invalid(
            f"{where}device", f"must be 22-128 characters of A-Z a-z 0-9 _ - (at least 128 random bits, "
            f"base64url); got {got}"
        )


def prepare(
    survey: Survey, bodies: Sequence[Mapping[str, Any]], where: Callable[[int], str]
) -> Prepared:
    """Check every response of a request against the survey and its mechanisms.

    Raises :class:`~deniable.server._errors.Invalid` naming the first bad
    field (``where(i)`` is the JSON path prefix of response ``i``, e.g.
    ``responses[3].``). Reports are checked per question, all responses at
    once, and only once: the checked reports give both the canonical text
    that is stored and the aggregate.
    """
    if not 1 <= len(bodies) <= MAX_BATCH:
        raise Invalid("responses", f"a batch holds 1 to {MAX_BATCH} responses; got {len(bodies)}")
    for i, body in enumerate(bodies):
        _check_body(survey, body, where(i))
    sampled = survey.allocation == "sample"
    everyone = list(range(len(bodies)))
    answered = {
        q.id: [i for i, body in enumerate(bodies) if q.id in body["reports"]] if sampled else everyone
        for q in survey.questions
    }
    versions = [body.get("wire_version", 1) for body in bodies]
    checked: dict[str, Any] = {}
    canonical: dict[str, list[Any]] = {}
    for q in survey.questions:
        mine = answered[q.id]
        try:
            values = [bodies[i]["reports"][q.id] for i in mine]
            if q.randomized:
                values = _version_1(q.randomizer, values, [versions[i] for i in mine])
            reports = q.reports_from_json(values)
        except ReportError as exc:
            subfield = getattr(exc, "subfield", "")
            raise Invalid(f"{where(mine[exc.index])}reports.{q.id}{printable(subfield)}", exc.reason) from None
        checked[q.id] = reports
        canonical[q.id] = q.reports_to_json(reports)
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    if sampled:
        rows: list[dict[str, Any]] = [{} for _ in bodies]
        for qid, mine in answered.items():
            for i, report in zip(mine, canonical[qid], strict=True):
                rows[i][qid] = report
        texts = [encode(row) for row in rows]
    else:
        texts = [encode(dict(zip(canonical, row, strict=True))) for row in zip(*canonical.values(), strict=True)]
    tokens = [None if (t := body.get("invite_token")) is None else token_hash(t) for body in bodies]
    hashes = [token_hash(f"{text}\n{token or ''}") for text, token in zip(texts, tokens, strict=True)]
    # the device key is not part of the body hash: nothing stored with a response links it to a device
    devices = None if survey.rounds is None else [body["device"] for body in bodies]
    keys = [body["idempotency_key"] for body in bodies]
    return Prepared(keys, tokens, texts, hashes, checked, answered if sampled else None, devices)
