"""A survey's protection settings: rate limit, response cap and who may read the results.

These are the operator's settings of a survey, written beside its questions::

    rate_limit: {responses: 30, seconds: 600}   # per client address (the default)
    max_responses: 5000                          # no cap by default
    results: admin                               # results need the admin token ("public" by default)
    embed: {origins: [https://example.qualtrics.com]}  # other sites that may embed it (none by default)
    transport: {kind: ohttp, relay: "https://relay.example.org/"}   # devices post through a relay

* ``rate_limit`` applies to single responses (``POST /surveys/{id}/responses``)
  of surveys open to everyone (not ``invite_only``): each client address has
  a bucket of ``responses`` tokens that refills at ``responses / seconds``
  tokens per second; every attempt takes one token, and an empty bucket is
  answered 429 with ``Retry-After`` (:mod:`deniable.server._security`).
  ``rate_limit: off`` turns it off.
* ``max_responses`` caps the responses stored for the survey, batches
  included; a request that would go over it is refused whole (409).
* ``results: admin`` makes the results page and ``GET /surveys/{id}/results``
  need the admin token.
* ``embed`` lists the origins whose pages may frame the survey's page and
  fetch the survey and post responses from the browser (CORS); none by
  default (:mod:`deniable.server._embed`).
* ``transport`` says how devices post: ``direct`` (the default) to this
  server, or ``{kind: ohttp, relay: URL}`` encapsulated (Oblivious HTTP,
  RFC 9458) through the relay at ``URL``, run by another party, to this
  server's gateway (``deniable serve --ohttp-keys``). ``shuffler: true``
  says the relay holds, shuffles and forwards the reports in batches
  (``deniable relay --shuffle``): the service then takes the survey's
  responses from shuffled batches only, and its results state the shuffled
  guarantee with the batch sizes observed.

Unlike the questions, these settings may change between runs of the server:
a survey stored with other settings is updated to the new ones
(:meth:`deniable.server._storage.Storage.add_survey`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from deniable.server._embed import Embed, load_embed
from deniable.server._errors import SurveyError

__all__ = ["RateLimit", "Transport", "DIRECT", "Policy", "DEFAULT_RATE_LIMIT", "POLICY_FIELDS", "load_policy"]

ResultsAccess = Literal["public", "admin"]


@dataclass(frozen=True)
class RateLimit:
    """At most ``responses`` at once, refilled at ``responses / seconds`` per second (token bucket)."""

    responses: int
    seconds: float

    @property
    def per_second(self) -> float:
        """Sustained rate: tokens added per second."""
        return self.responses / self.seconds

    def to_json(self) -> dict[str, Any]:
        return {"responses": self.responses, "seconds": self.seconds}


DEFAULT_RATE_LIMIT = RateLimit(responses=30, seconds=600.0)
"""30 responses per client address at once, then one every 20 seconds: enough for a class
answering together behind one NAT address, far too few to move an estimate from one machine."""

MAX_WINDOW_SECONDS = 30 * 86_400.0


@dataclass(frozen=True)
class Transport:
    """How devices post their responses: ``direct``, or ``ohttp`` through ``relay``."""

    kind: Literal["direct", "ohttp"] = "direct"
    relay: str | None = None
    shuffler: bool = False

    def to_json(self) -> dict[str, Any] | str:
        if self.kind == "direct":
            return "direct"
        return {"kind": self.kind, "relay": self.relay, **({"shuffler": True} if self.shuffler else {})}


DIRECT = Transport()
_URL = re.compile(r"https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~!$&'()*+,=:@%/\-]*)?")
"""An http(s) URL: a host name or IPv4 address, an optional port and path (its origin goes into a CSP)."""


def _transport(value: Any) -> Transport:
    if value is None or value == "direct":
        return DIRECT
    if not isinstance(value, Mapping) or value.get("kind") != "ohttp":
        raise SurveyError("transport", f"must be 'direct' or {{kind: ohttp, relay: URL}}; got {value!r:.80}")
    extra = sorted(set(value) - {"kind", "relay", "shuffler"})
    if extra:
        raise SurveyError(f"transport.{extra[0]}", "is not a field of transport (allowed: kind, relay, shuffler)")
    relay = value.get("relay")
    if not isinstance(relay, str) or not _URL.fullmatch(relay):
        raise SurveyError("transport.relay", f"must be the relay's http(s) URL; got {relay!r:.80}")
    shuffler = value.get("shuffler", False)
    if not isinstance(shuffler, bool):
        raise SurveyError("transport.shuffler", f"must be true or false; got {shuffler!r:.40}")
    return Transport("ohttp", relay, shuffler)


@dataclass(frozen=True)
class Policy:
    """The protection settings of one survey (see the module docstring)."""

    rate_limit: RateLimit | None = DEFAULT_RATE_LIMIT
    max_responses: int | None = None
    results: ResultsAccess = "public"
    embed: Embed | None = None

    @property
    def embed_origins(self) -> tuple[str, ...]:
        """The origins that may embed the survey (none: only its own pages)."""
        return () if self.embed is None else self.embed.origins
    transport: Transport = DIRECT

    def to_json(self) -> dict[str, Any]:
        """The settings that differ from the defaults (a survey without any keeps its old form)."""
        out: dict[str, Any] = {}
        if self.rate_limit != DEFAULT_RATE_LIMIT:
            out["rate_limit"] = None if self.rate_limit is None else self.rate_limit.to_json()
        if self.max_responses is not None:
            out["max_responses"] = self.max_responses
        if self.results != "public":
            out["results"] = self.results
        if self.embed is not None:
            out["embed"] = self.embed.to_json()
        if self.transport != DIRECT:
            out["transport"] = self.transport.to_json()
        return out


POLICY_FIELDS = frozenset({"rate_limit", "max_responses", "results", "embed", "transport"})
"""The survey fields that are settings (they may change; the questions may not)."""


def _positive_int(value: Any, field: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise SurveyError(field, f"must be an integer in 1..{limit}; got {value!r:.60}")
    return value


def _rate_limit(value: Any) -> RateLimit | None:
    if value is None or value is False or value == "off":
        return None
    if not isinstance(value, Mapping):
        raise SurveyError(
            "rate_limit", f"must be {{responses: N, seconds: S}} or off; got {value!r:.60}"
        )
    extra = sorted(set(value) - {"responses", "seconds"})
    if extra:
        raise SurveyError(f"rate_limit.{extra[0]}", "is not a field of rate_limit (allowed: responses, seconds)")
    for key in ("responses", "seconds"):
        if key not in value:
            raise SurveyError(f"rate_limit.{key}", "is required")
    responses = _positive_int(value["responses"], "rate_limit.responses", 1_000_000)
    seconds = value["seconds"]
    if (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds)
            or not 0 < seconds <= MAX_WINDOW_SECONDS):
        raise SurveyError(
            "rate_limit.seconds", f"must be a number of seconds in (0, {MAX_WINDOW_SECONDS:.0f}]; got {seconds!r:.60}"
        )
    return RateLimit(responses, float(seconds))


def load_policy(data: Mapping[str, Any]) -> Policy:
    """The settings of a survey definition (defaults for the fields it leaves out)."""
    rate_limit = _rate_limit(data["rate_limit"]) if "rate_limit" in data else DEFAULT_RATE_LIMIT
    cap = data.get("max_responses")
    max_responses = None if cap is None else _positive_int(cap, "max_responses", 2**62)
    results = data.get("results", "public")
    if results not in ("public", "admin"):
        raise SurveyError("results", f"must be 'public' or 'admin'; got {results!r:.60}")
    return Policy(rate_limit, max_responses, results, load_embed(data.get("embed")), _transport(data.get("transport")))
