"""The rounds a results request shows (``?rounds=last:52``), and each closed round's results, computed once.

A survey in rounds keeps one aggregate per round and question. Its results
used to estimate every round on every ``GET``: at a year of hourly rounds,
12.3 MB and 1.6 CPU-seconds per request, open to anyone for a public survey.
Now a request names a window of rounds (:func:`parse_window`):

``last:N``
    the ``N`` rounds up to the current one (``current - N + 1`` .. ``current``);
    the default is :data:`DEFAULT_WINDOW`;
``A:B``
    rounds ``A`` to ``B - 1``, like a Python slice (``0:52``: the first 52);

at most :data:`MAX_WINDOW` rounds either way; rounds without responses are
left out, as before. The answer says which window it shows and how many
rounds have responses (``window``), so a client pages through them.

**Closed rounds are computed once.** A response counts in the round of the
server's clock when its transaction charges its device
(:mod:`deniable.server._devices`): no request names a round, so no report
can be sent "for" a closed round. A round closes when the clock passes its
end; a transaction that read the clock just before then may still commit
into it a moment later. So a closed round's results are kept
(:class:`RoundCache`, up to :data:`MAX_CACHED_BYTES`) under a digest of the round's stored aggregates (their
bytes, as read): such a late commit changes the digest and the round is
computed afresh, never served stale. The current round is computed on every
request. Each round's ``shuffled`` statement and its ``shuffler`` batches are
added on every request (the service may state a tighter one later:
:mod:`deniable.server._shuffled`; a batch may arrive in the current round).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deniable._estimate import Target
from deniable.server._database import read_stat
from deniable.server._errors import Invalid
from deniable.server._results import round_guarantees, round_json, with_changes
from deniable.server._rounds import MAX_ROUND
from deniable.server._shuffled import Ahead
from deniable.server._surveys import Survey

__all__ = ["DEFAULT_WINDOW", "MAX_WINDOW", "MAX_CACHED_BYTES", "Window", "parse_window", "RoundCache", "window_json"]

DEFAULT_WINDOW = "last:52"
"""The rounds a results request shows unless it names others: the latest 52 (a year of weekly rounds)."""

MAX_WINDOW = 1000
"""The most rounds one results request shows."""

MAX_CACHED_BYTES = 64 * 1024 * 1024
"""Closed rounds' results kept per process, counted as their JSON text (a few kB per round of a few
questions; large domains more); the least recently used go first."""

_LAST = re.compile(r"last:([0-9]{1,10})")
_SLICE = re.compile(r"([0-9]{1,10}):([0-9]{1,10})")


@dataclass(frozen=True)
class Window:
    """Rounds ``first`` to ``stop - 1`` (empty when ``stop <= first``), as asked for (``asked``)."""

    asked: str
    first: int
    stop: int


def parse_window(text: str, current_round: int | None) -> Window:
    """The window ``text`` names (``last:N`` or ``A:B``); :class:`Invalid` naming ``rounds`` otherwise."""
    how = f"must be last:N or A:B (rounds A to B - 1), at most {MAX_WINDOW} rounds; got {text!r:.40}"
    if (match := _LAST.fullmatch(text)) is not None:
        n = int(match[1])
        if not 1 <= n <= MAX_WINDOW:
            raise Invalid("rounds", how)
        stop = -1 if current_round is None else current_round + 1  # before the start: no round
        return Window(text, max(0, stop - n), max(0, stop))
    if (match := _SLICE.fullmatch(text)) is not None:
        first, stop = int(match[1]), int(match[2])
        if not first < stop <= first + MAX_WINDOW or stop > MAX_ROUND + 1:
            raise Invalid("rounds", how)
        return Window(text, first, stop)
    raise Invalid("rounds", how)


def _digest(stats: Mapping[str, bytes]) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for qid in sorted(stats):
        h.update(len(qid).to_bytes(4, "little") + qid.encode() + len(stats[qid]).to_bytes(8, "little"))
        h.update(stats[qid])
    return h.digest()


class RoundCache:
    """Closed rounds' results (without ``shuffled``), by survey, round, target and level, checked by digest.

    At most ``max_bytes`` of results, counted as their JSON text; the least
    recently used are forgotten first. Thread-safe; ``hits`` and ``misses``
    count lookups of closed rounds.
    """

    def __init__(self, max_bytes: int = MAX_CACHED_BYTES) -> None:
        self._max = max_bytes
        self._kept: OrderedDict[tuple[str, int, str, float], tuple[bytes, dict[str, Any], int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, int, str, float], digest: bytes) -> dict[str, Any] | None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] == digest:
                self._kept.move_to_end(key)
                self.hits += 1
                return kept[1]
            self.misses += 1
            return None

    def put(self, key: tuple[str, int, str, float], digest: bytes, value: dict[str, Any]) -> None:
        size = len(json.dumps(value, default=str))
        if size > self._max:
            return
        with self._lock:
            before = self._kept.pop(key, None)
            if before is not None:
                self.bytes -= before[2]
            self._kept[key] = (digest, value, size)
            self.bytes += size
            while self.bytes > self._max:
                self.bytes -= self._kept.popitem(last=False)[1][2]

    def __len__(self) -> int:
        return len(self._kept)


def window_json(
    survey: Survey, stats: Mapping[int, Mapping[str, bytes]], current_round: int | None, window: Window,
    n_rounds: int, target: Target = "population", level: float = 0.95, ahead: Ahead | None = None,
    cache: RoundCache | None = None, batches: Mapping[int, Sequence[int]] | None = None,
) -> dict[str, Any]:
    """The rounds of ``window`` with responses (``stats``: each one's stored aggregates as bytes, by
    question id), each as :func:`~deniable.server._results.round_json` gives it plus its ``shuffled``
    statement and ``shuffler`` (:func:`~deniable.server._results.round_guarantees`; ``batches``: each
    round's shuffled batch sizes, None for a survey not collected through a shuffler); a closed
    round's from ``cache`` when its aggregates are those it was computed from.

    Returns ``{"rounds": [...], "window": {"rounds", "first", "stop", "n_rounds"}}``; ``n_rounds``:
    the rounds of the survey with responses, all of them.
    """
    out = []
    for index, by_question in sorted(stats.items()):
        closed = cache is not None and current_round is not None and index < current_round
        key = (survey.id, index, target, level)
        digest = _digest(by_question) if closed else b""
        one = cache.get(key, digest) if closed and cache is not None else None
        if one is None:
            aggregates = {q.id: read_stat(q, by_question[q.id]) if q.id in by_question else q.empty_aggregate()
                          for q in survey.questions}
            one = round_json(survey, index, aggregates, target, level)
            if closed and cache is not None:
                cache.put(key, digest, one)
        kept = None if batches is None else batches.get(index, ())
        out.append({**one, **round_guarantees(survey, one["n_responses"], kept, ahead)})
    return {
        "rounds": with_changes(out),  # the change test within the window (none for its first round)
        "window": {"rounds": window.asked, "first": window.first, "stop": window.stop, "n_rounds": n_rounds},
    }
