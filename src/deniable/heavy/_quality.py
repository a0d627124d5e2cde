"""How well discovery works: a Zipf workload with a long tail, and recall, precision and count error.

The workload (:func:`zipf_strings`): ``words`` distinct lowercase words of
3 to ``max_length`` letters whose shares follow Zipf(``s``) over
``1 - tail`` of the devices, and ``tail`` of the devices each typing a
random word of its own (``max_length`` letters, so a tail word is never a
prefix-cut of a body word).

The scores of one discovery (:func:`score`), against the true top ``top``
values ``T`` and the reported values ``R`` (``identify(stat, top=top)``):
recall ``|R & T| / |T|``, precision ``|R & T| / |R|`` (1 when nothing is
reported), and the median relative error ``|count - true| / true`` of the
reported true values.

Set-valued workloads (:func:`drawn_sets`, :func:`zipf_sets`): sets of items drawn independently from
given weights, optionally with a planted itemset, with the exact population share of any itemset,
for :class:`~deniable.FrequentItems` and :class:`~deniable.FrequentItemsets`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from deniable.heavy._hitters import HeavyHitters

__all__ = ["zipf_strings", "score", "discovery_sweep", "zipf_sets", "drawn_sets"]

_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def _random_words(count: int, low: int, high: int, rng: np.random.Generator) -> list[str]:
    lengths = rng.integers(low, high + 1, size=count)
    letters = rng.integers(0, 26, size=(count, high))
    return ["".join(_LETTERS[letters[i, : lengths[i]]]) for i in range(count)]


def zipf_strings(n: int, rng: np.random.Generator, *, words: int = 1000, s: float = 1.1, tail: float = 0.25,
                 max_length: int = 6) -> list[str]:
    """``n`` device values: a Zipf(``s``) body over ``words`` words and a ``tail`` share of unique words."""
    if n < 1 or not 0 <= tail < 1 or words < 1 or max_length < 3:
        raise ValueError("zipf_strings needs n >= 1, 0 <= tail < 1, words >= 1 and max_length >= 3")
    vocabulary: list[str] = []
    seen: set[str] = set()
    while len(vocabulary) < words:
        for w in _random_words(words, 3, max_length, rng):
            if w not in seen and len(vocabulary) < words:
                seen.add(w)
                vocabulary.append(w)
    weights = 1 / np.arange(1, words + 1) ** s
    n_tail = int(round(tail * n))
    body = rng.choice(words, n - n_tail, p=weights / weights.sum())
    values = [vocabulary[i] for i in body.tolist()] + _random_words(n_tail, max_length, max_length, rng)
    rng.shuffle(values)
    return values


def score(values: Sequence[Any], found: Any, top: int) -> dict[str, float]:
    """Recall and precision of ``found`` (a :class:`~deniable.heavy.Discovery`) against the true top ``top``."""
    truth = Counter(values)
    best = {v for v, _ in truth.most_common(top)}
    reported = list(found.values)
    hits = [i for i, v in enumerate(reported) if v in best]
    errors = [abs(found.counts[i] - truth[reported[i]]) / truth[reported[i]] for i in hits]
    return {
        "recall": len(hits) / max(len(best), 1),
        "precision": len(hits) / len(reported) if reported else 1.0,
        "relative_error": float(np.median(errors)) if errors else float("nan"),
    }


def discovery_sweep(methods: Sequence[str], epsilons: Sequence[float], ns: Sequence[int], top: int,
                    rng: np.random.Generator, *, max_length: int = 6, top_k: int = 32,
                    **workload: Any) -> list[dict[str, Any]]:
    """One seeded run per (method, epsilon, n): recall, precision, count error and CPU seconds.

    ``device_seconds`` is :meth:`HeavyHitters.privatize_many` (seeded, the
    simulation path), ``server_seconds`` aggregating plus ``identify``.
    """
    records = []
    for n in ns:
        values = zipf_strings(n, rng, max_length=max_length, **workload)
        for method in methods:
            for epsilon in epsilons:
                hh = HeavyHitters(epsilon=epsilon, method=method, max_length=max_length, top_k=top_k,
                                  seed=rng.bytes(32))
                start = time.process_time()
                reports = hh.privatize_many(values, rng=rng)
                middle = time.process_time()
                found = hh.identify(hh.aggregate(reports), top=top)
                end = time.process_time()
                records.append({
                    "method": method, "epsilon": hh.epsilon, "n": n, "top": top, **score(values, found, top),
                    "device_seconds": middle - start, "server_seconds": end - middle,
                })
    return records



def zipf_sets(n: int, rng: np.random.Generator, *, items: int = 100, s: float = 1.1, max_draws: int = 8,
              planted: Sequence[int] = (), planted_share: float = 0.0) -> tuple[list[list[int]], Any]:
    """``n`` sets of the items ``0 .. items - 1`` drawn with Zipf(``s``) weights (:func:`drawn_sets`)."""
    weights = 1 / np.arange(1, items + 1) ** s
    return drawn_sets(n, rng, weights / weights.sum(), max_draws=max_draws, planted=planted,
                      planted_share=planted_share)


def drawn_sets(n: int, rng: np.random.Generator, weights: Any, *, max_draws: int = 8, planted: Sequence[int] = (),
               planted_share: float = 0.0) -> tuple[list[list[int]], Any]:
    """``n`` sets of the items ``0 .. len(weights) - 1`` and the exact population share of any itemset.

    A user draws ``D`` uniform in ``1 .. max_draws`` and takes ``D`` items independently with the
    probabilities ``weights`` (repeats merged); with probability ``planted_share`` it also holds the
    ``planted`` items. ``share(A)``, the chance that a user holds every item of ``A``, is
    ``rho P(A - planted in draws) + (1 - rho) P(A in draws)``, with
    ``P(B in draws) = mean_D sum_{T <= B} (-1)^|T| (1 - w(T))^D`` (inclusion-exclusion).
    """
    weights = np.asarray(weights, dtype=float)
    draws = rng.choice(weights.size, size=(n, max_draws), p=weights)
    depth = rng.integers(1, max_draws + 1, size=n)
    extra = rng.random(n) < planted_share
    sets = [sorted({*row[:d].tolist(), *(planted if e else ())}) for row, d, e in
            zip(draws, depth.tolist(), extra.tolist(), strict=True)]

    def within(b: Sequence[int]) -> float:
        total = 0.0
        for mask in range(1 << len(b)):
            chosen = [b[j] for j in range(len(b)) if mask >> j & 1]
            rest = 1 - float(weights[chosen].sum())
            total += (-1) ** len(chosen) * float(np.mean(rest ** np.arange(1, max_draws + 1)))
        return total

    def share(itemset: Sequence[int]) -> float:
        a = sorted(set(itemset))
        return planted_share * within([i for i in a if i not in planted]) + (1 - planted_share) * within(a)

    return sets, share
