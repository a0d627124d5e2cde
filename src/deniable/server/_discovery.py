"""Free-text questions: discover what respondents type, privately (heavy hitters).

A question of ``type: free-text`` asks for a short text (or an integer) that
nobody listed in advance::

    - id: tool
      text: Which tool do you use most for note taking?
      type: free-text
      max_length: 12      # bytes of UTF-8 kept; a longer answer is cut (and marked cut)
      epsilon: 4

Each device randomizes its answer by :class:`deniable.heavy.HeavyHitters`
(PEM by default; ``method: sfp`` runs Apple's sequence fragment puzzle) and
sends one report in the exact JSON form of ``reports_from_json``; the
question keeps the exact versioned configuration (``"deniable.discovery"``,
:meth:`HeavyHitters.to_config`) that devices randomize with and results are
decoded with. Optional fields: ``kind`` (``text``, the default, or
``integer``), ``top_k`` (values kept per level, default
:data:`DEFAULT_TOP_K`), ``oracle`` (``cms`` or ``hcms``; default: the better
for the epsilon), ``rows`` and ``width`` (the count-mean sketch, defaults
:data:`DEFAULT_ROWS` x :data:`DEFAULT_WIDTH`), ``seed`` (64 hex digits).
``alphabet`` (text, ``method: pem`` only): a string of distinct printable
ASCII characters (space to ``~``) that every answer consists of, say
``abcdefghijklmnopqrstuvwxyz``; PEM then extends a prefix by those bytes and
the end marker only (see :class:`~deniable.heavy.HeavyHitters`), and the
survey page says which characters are allowed and refuses to send an answer
with another. It is part of the discovery configuration devices get.

**Seed.** The sketch's public hash seed is, unless given, derived from the
question's definition (BLAKE2b of its canonical JSON), so that loading the
same definition again gives the same survey (a server restarted with its
YAML file must not conflict with what it stored). Privacy never depends on
the seed; accuracy needs it chosen independently of the answers, which a
hash of the definition is.

**Aggregate.** The mergeable :class:`~deniable.heavy.HeavyStat` (one
``rows x width`` sketch per level), stored and merged like every other
question's aggregate; its size is ``levels x rows x width`` integers,
capped at :data:`MAX_SKETCH_CELLS` so that a write stays cheap.

**Results** (:mod:`deniable.server._question_results`).
:meth:`HeavyHitters.identify` on the merged aggregate: the values whose
count is significantly above 0, most frequent first, with the count,
standard error and normal interval at the results' level. It costs
``levels x top_k x 256`` sketch look-ups (``|alphabet| + 1`` instead of 256
with an alphabet), so it is cached by aggregate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from deniable.errors import ConfigError
from deniable.heavy import HeavyHitters
from deniable.heavy._items import KINDS
from deniable.heavy._protocols import PROTOCOLS
from deniable.server._errors import SurveyError
from deniable.server._questions import Question

__all__ = ["FREE_TEXT", "load_free_text_question",
           "DEFAULT_TOP_K", "DEFAULT_ROWS", "DEFAULT_WIDTH", "MAX_SKETCH_CELLS"]

FREE_TEXT = "free-text"
DEFAULT_TOP_K = 16
DEFAULT_ROWS = 32
DEFAULT_WIDTH = 256
MAX_SKETCH_CELLS = 1 << 19
"""Largest ``levels x rows x width`` of a free-text question's aggregate (integers stored per shard)."""

_DEFINITION_KEYS = frozenset({"id", "text", "type", "max_length", "epsilon", "method", "kind", "top_k", "oracle",
                              "rows", "width", "seed", "alphabet"})
_STORED_KEYS = frozenset({"id", "text", "type", "discovery"})


# -------------------------------------------------------------------- loading
def _integer(data: Mapping[str, Any], key: str, where: str, default: int | None, low: int, high: int) -> int:
    if key not in data:
        if default is None:
            raise SurveyError(f"{where}{key}", f"is required by a free-text question (an integer in {low}..{high})")
        return default
    value = data[key]
    if type(value) is not int or not low <= value <= high:
        raise SurveyError(f"{where}{key}", f"must be an integer in {low}..{high}; got {value!r:.60}")
    return value


def _choice(data: Mapping[str, Any], key: str, where: str, options: Sequence[str], default: Any) -> Any:
    value = data.get(key, default)
    if value is not default and value not in options:
        raise SurveyError(f"{where}{key}", f"must be one of {list(options)}; got {value!r:.60}")
    return value


def _derived_seed(data: Mapping[str, Any]) -> bytes:
    """The sketch seed of a definition without ``seed``: BLAKE2b of its canonical JSON."""
    text = json.dumps(dict(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=32, person=b"deniable:q-seed").digest()


def load_free_text_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    """A free-text question from its definition or its stored form (``where``: the path prefix)."""
    if isinstance(data.get("discovery"), dict):
        extra = sorted(set(data) - _STORED_KEYS)
        if extra:
            raise SurveyError(f"{where}{extra[0]}", "is not a field of a free-text question with a discovery config")
        try:
            hitters = HeavyHitters.from_config(data["discovery"])
        except (ConfigError, ValueError, TypeError) as exc:
            message = str(exc)
            field = "discovery.alphabet" if message.startswith("discovery config: alphabet") else "discovery"
            raise SurveyError(f"{where}{field}", message) from None
        _check_printable(hitters.alphabet, f"{where}discovery.alphabet")
        return Question(qid, text, FREE_TEXT, hitters)
    extra = sorted(set(data) - _DEFINITION_KEYS - {"randomized"})
    if extra:
        raise SurveyError(
            f"{where}{extra[0]}", f"is not a field of a free-text question (allowed: {sorted(_DEFINITION_KEYS)})"
        )
    kind = _choice(data, "kind", where, KINDS, "text")
    max_length = _integer(data, "max_length", where, None if kind == "text" else 8, 1, 63)
    if kind == "integer" and "max_length" in data:
        raise SurveyError(f"{where}max_length", "applies to kind: text only (an integer is 8 bytes)")
    if "epsilon" not in data:
        raise SurveyError(f"{where}epsilon", "is required by a free-text question (each respondent's privacy loss)")
    epsilon = data["epsilon"]
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        raise SurveyError(f"{where}epsilon", f"must be a number; got {epsilon!r:.60}")
    method = _choice(data, "method", where, list(PROTOCOLS), "pem")
    oracle = _choice(data, "oracle", where, ["cms", "hcms"], None)
    top_k = _integer(data, "top_k", where, DEFAULT_TOP_K, 1, 256)
    rows = _integer(data, "rows", where, DEFAULT_ROWS, 1, 1024)
    width = _integer(data, "width", where, DEFAULT_WIDTH, 8, 4096)
    if width & (width - 1):
        raise SurveyError(f"{where}width", f"must be a power of two in 8..4096; got {width}")
    levels = max_length + 1 if kind == "text" else 8
    if levels * rows * width > MAX_SKETCH_CELLS:
        raise SurveyError(
            f"{where}rows", f"the aggregate would hold levels x rows x width = {levels} x {rows} x {width} = "
            f"{levels * rows * width} counts, above {MAX_SKETCH_CELLS}; lower rows, width or max_length"
        )
    seed = data.get("seed")
    if seed is not None and not (isinstance(seed, str) and len(seed) == 64):
        raise SurveyError(f"{where}seed", f"must be 64 hex digits (32 bytes); got {seed!r:.80}")
    alphabet = data.get("alphabet")
    if "alphabet" in data and alphabet is None:
        raise SurveyError(f"{where}alphabet", "alphabet must be a non-empty string of distinct ASCII characters "
                          "(or absent); got None")
    try:
        hitters = HeavyHitters(
            epsilon=epsilon, method=method, kind=kind, max_length=max_length, top_k=top_k, oracle=oracle,
            rows=rows, width=width, seed=seed if seed is not None else _derived_seed(data), alphabet=alphabet,
        )
    except (ValueError, TypeError) as exc:
        message = str(exc)
        field = ("alphabet" if "alphabet" in message else "epsilon" if "epsilon" in message
                 else "seed" if "seed" in message else "type")
        raise SurveyError(f"{where}{field}", message) from None
    _check_printable(alphabet, f"{where}alphabet")
    return Question(qid, text, FREE_TEXT, hitters)


def _check_printable(alphabet: str | None, field: str) -> None:
    """SurveyError naming ``field`` unless the alphabet (checked by HeavyHitters) is printable ASCII.

    A respondent types the answer: a control character (code points 0..31
    and 127) cannot be typed in the page's text box, so an alphabet holding
    one is a mistake.
    """
    unprintable = next((c for c in alphabet or "" if not " " <= c <= "~"), None)
    if unprintable is not None:
        raise SurveyError(field, "alphabet must hold printable ASCII characters (space to '~', code points "
                          f"32..126) that a respondent can type; got {unprintable!r}")
