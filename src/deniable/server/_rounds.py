"""Surveys that run in rounds: the ``rounds`` setting, device keys and their hashes.

A survey may ask the same devices again, once per round::

    rounds:
      every: 1d                 # seconds, or "<n>s", "<n>m", "<n>h", "<n>d"
      lifetime_epsilon: 6       # what one device may spend over all rounds
      start: 2026-12-01T00:00:00Z   # optional; default: when the survey was first stored
                                    # (to the millisecond); quoted or not
      anytime: true             # optional: the results draw anytime-valid confidence sequences
      planned_n: 10000          # optional, with anytime: the reports the sequences' width is tuned for

Round ``r`` (0-based) is ``floor((now - start) / every)`` of the server's
clock (:func:`deniable._accounting.round_index`).

A round index is a 64-bit integer in the database, yet is kept below
``2**31`` (:data:`MAX_ROUND` is the last round) so every client and
database reads it as an ordinary integer: ``start`` lies in
:data:`MIN_START` .. :data:`END` (year 2000 to the end of year 9999, and the
first round must end by then), ``every`` in 1 s .. ten years, so at the
time a survey is loaded no round is near ``2**31`` (at ``every: 1`` the
index reaches it 68 years after ``start``, at a minute 4,000 years after);
a response after the last round is refused (409,
:func:`deniable.server._ledger.current_round`), never stored under a larger
index. Every response carries a
``device`` key (22 to 128 characters of ``[A-Za-z0-9_-]``; devices draw at
least 128 random bits), and the server takes at most one response per
device per round and refuses one that would take the device's privacy loss
over ``lifetime_epsilon`` (:mod:`deniable._accounting`: per question a
report costs its epsilon, a memoizing mechanism at most its lifetime bound
of one unchanged value; a device spends the sum over its questions).

The server keeps only a keyed hash of a device key,
``HMAC-SHA256(salt, key)`` (:func:`device_hash`), with a random 32-byte salt
per survey stored in the database (:class:`~deniable.server._storage.Storage`
draws it when the survey is first stored). Why keyed, and why this key:

* a key is 128 random bits or more, so its hash cannot be reversed by
  guessing; the hash is still all the server needs (equal keys, equal hashes);
* the per-survey salt makes the hashes of one device in two surveys
  unrelated, so the database cannot join a device's participation across
  surveys;
* the salt lives in the database, not in a server secret: every server of
  one database computes the same hashes, and no restart or lost
  configuration can turn every device into a new one (which would reset
  every budget). A copy of the database alone lets its holder test a
  *known* key against the hashes; it never reveals a key.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from deniable._accounting import TOLERANCE, ReportCost, report_cost, round_index
from deniable.server._errors import SurveyError

__all__ = [
    "Rounds", "load_rounds", "DEVICE_PATTERN", "device_hash", "question_costs", "round_cost",
    "check_round_cost", "iso_utc", "MAX_ROUND", "MIN_START", "END",
]

DEVICE_PATTERN = re.compile(r"[A-Za-z0-9_-]{22,128}")
"""Device keys: 22-128 URL-safe characters (a device draws >= 128 random bits, base64url)."""

SALT_BYTES = 32
MAX_EVERY_SECONDS = 10 * 366 * 86_400  # ten years: a round index stays a small integer
MAX_ROUND = 2**31 - 1
"""The last round of any survey (a round index stays a signed 32-bit integer)."""
MIN_START = 946_684_800.0
"""``rounds.start`` at the earliest: 2000-01-01T00:00:00Z."""
END = 253_402_300_800.0
"""10000-01-01T00:00:00Z: ``rounds.start`` and the end of the first round are before it."""
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_EVERY = re.compile(r"([1-9][0-9]{0,9})([smhd])")
_KEYS = frozenset({"every", "lifetime_epsilon", "start", "anytime", "planned_n"})


@dataclass(frozen=True)
class Rounds:
    """A survey's rounds: ``every`` seconds from ``start`` (seconds since the epoch, UTC).

    ``start`` is ``None`` until the survey is stored (then: its creation time).
    """

    every: int
    lifetime_epsilon: float
    start: float | None = None
    anytime: bool = False  # results with confidence sequences over the rounds (deniable._sequences)
    planned_n: int = 10_000  # the reports the sequences are tuned for

    def round_at(self, now: float) -> int:
        """The 0-based round at ``now`` (negative before ``start``)."""
        assert self.start is not None, "the survey is not stored yet (rounds.start unset)"
        return round_index(now, self.start, self.every)

    def starting(self, start: float) -> Rounds:
        """These rounds from ``start`` (to the millisecond, as devices' clocks read it)."""
        return replace(self, start=round(start, 3))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"every": self.every, "lifetime_epsilon": self.lifetime_epsilon}
        if self.start is not None:
            out["start"] = iso_utc(self.start)
        if self.anytime:
            out.update(anytime=True, planned_n=self.planned_n)
        return out


def iso_utc(seconds: float) -> str:
    """``seconds`` since the epoch as ISO-8601 UTC: ``2026-12-01T00:00:00Z``, milliseconds if any."""
    when = datetime.fromtimestamp(seconds, UTC)
    text = when.isoformat(timespec="milliseconds" if when.microsecond else "seconds")
    return text.removesuffix("+00:00") + "Z"


def _every(value: Any) -> int:
    if isinstance(value, str):
        match = _EVERY.fullmatch(value.strip())
        seconds = int(match[1]) * _UNITS[match[2]] if match else 0
    elif isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        seconds = 0
    if not 1 <= seconds <= MAX_EVERY_SECONDS:
        raise SurveyError(
            "rounds.every", f"must be a number of seconds (1..{MAX_EVERY_SECONDS}) or a string like '30m', "
            f"'12h', '1d' (a positive integer and one of s, m, h, d); got {value!r:.60}"
        )
    return seconds


def _start(value: Any) -> float:
    """``rounds.start``: ISO-8601 text in UTC, or the timestamp YAML reads from it unquoted."""
    message = "must be an ISO-8601 time in UTC, e.g. 2026-12-01T00:00:00Z"
    if isinstance(value, datetime):  # YAML reads an unquoted timestamp as a datetime
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise SurveyError("rounds.start", f"{message}; got {value!r:.60}") from None
    else:  # a date alone, a number
        raise SurveyError("rounds.start", f"{message} (a date and a time); got {value!r:.60}")
    offset = parsed.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise SurveyError("rounds.start", f"{message} (ending in Z or +00:00); got {value!r:.60}")
    return round(parsed.timestamp(), 3)  # to the millisecond, as it is written back


def _check_span(start: float | None, every: int) -> None:
    """:class:`SurveyError` unless ``start`` is in year 2000..9999 and the first round ends by the end of 9999."""
    if start is None:
        return
    if not MIN_START <= start or start + every > END:
        raise SurveyError(
            "rounds.start", f"must be from {iso_utc(MIN_START)} on, with the first round ending by the end of "
            f"year 9999 (start + every <= 10000-01-01T00:00:00Z; every is {every} s); got "
            f"{'before 2000' if start < MIN_START else iso_utc(min(start, END - 0.001))}"
        )


def load_rounds(value: Any) -> Rounds:
    """The ``rounds`` of a survey definition, checked (:class:`SurveyError` naming the field)."""
    if not isinstance(value, Mapping):
        raise SurveyError("rounds", f"must be {{every: ..., lifetime_epsilon: ...}}; got {value!r:.60}")
    extra = sorted(set(value) - _KEYS)
    if extra:
        raise SurveyError(f"rounds.{extra[0]}", f"is not a field of rounds (allowed: {sorted(_KEYS)})")
    for key in ("every", "lifetime_epsilon"):
        if key not in value:
            raise SurveyError(f"rounds.{key}", "is required")
    lifetime = value["lifetime_epsilon"]
    if (isinstance(lifetime, bool) or not isinstance(lifetime, (int, float))
            or not math.isfinite(lifetime) or lifetime <= 0):
        raise SurveyError(
            "rounds.lifetime_epsilon", f"must be a finite number > 0 (each device's privacy loss over "
            f"all rounds); got {lifetime!r:.60}"
        )
    start = _start(value["start"]) if value.get("start") is not None else None
    every = _every(value["every"])
    _check_span(start, every)
    anytime = value.get("anytime", False)
    if not isinstance(anytime, bool):
        raise SurveyError("rounds.anytime", f"must be true or false; got {anytime!r:.60}")
    planned = value.get("planned_n", 10_000)
    if not anytime and "planned_n" in value:
        raise SurveyError("rounds.planned_n", "applies only with anytime: true")
    if isinstance(planned, bool) or not isinstance(planned, int) or not 1 <= planned <= 10**12:
        raise SurveyError("rounds.planned_n", f"must be an integer from 1 to 10^12 (reports); got {planned!r:.60}")
    return Rounds(every, float(lifetime), start, anytime, planned)


def question_costs(questions: Any) -> dict[str, ReportCost]:
    """The :class:`~deniable._accounting.ReportCost` of each question, by id.

    A mechanism question costs its mechanism's epsilon per report (capped at
    its lifetime bound if it memoizes), a survey design its epsilon, a plain
    question nothing.
    """
    return {q.id: report_cost(getattr(q, "mechanism", q)) for q in questions}


def round_cost(costs: Mapping[str, ReportCost], allocation: str) -> float:
    """What one round costs a device at most: the sum of per-report epsilons (the largest if sampled)."""
    per = [c.per_report for c in costs.values()]
    return max(per) if allocation == "sample" else math.fsum(per)


def check_round_cost(rounds: Rounds, costs: Mapping[str, ReportCost], allocation: str) -> None:
    """:class:`SurveyError` if a single round already costs more than ``lifetime_epsilon``."""
    one = round_cost(costs, allocation)
    if one > rounds.lifetime_epsilon * (1 + TOLERANCE):
        parts = " + ".join(f"{c.per_report:.6g} ({qid})" for qid, c in costs.items() if c.per_report)
        how = "the largest of" if allocation == "sample" else "the sum of"
        raise SurveyError(
            "rounds.lifetime_epsilon",
            f"is {rounds.lifetime_epsilon:.6g}, but one round already costs a device {one:.6g} "
            f"({how} the questions' per-report epsilons: {parts}); raise lifetime_epsilon or lower the epsilons",
        )


def device_hash(salt: bytes, key: str) -> str:
    """``HMAC-SHA256(salt, key)`` in hex: how a device key is stored (see the module docstring)."""
    return hmac.digest(salt, key.encode(), hashlib.sha256).hex()
