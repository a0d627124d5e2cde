"""Seeded heavy-hitter discoveries that count false discoveries, for the calibrated tests and their power checks."""

from __future__ import annotations

from typing import Any

import numpy as np

import deniable as dn
from deniable.heavy._quality import zipf_strings


def runs_with_false_discoveries(
    rng: np.random.Generator, runs: int, corrected: bool = True, alphabet: str | None = None
) -> int:
    """How many of ``runs`` seeded discoveries report a value that no device holds.

    PEM over CMS (16 rows of 256, epsilon 6, max_length 8) on a Zipf(2) body of
    100 words with a 25% unique tail, n = 50,000. ``corrected=False`` turns
    off the collision correction of :meth:`identify` (the old behaviour).
    """
    bad = 0
    for _ in range(runs):
        values = zipf_strings(50_000, rng, words=100, s=2.0, tail=0.25, max_length=8)
        extra = {} if alphabet is None else {"alphabet": alphabet}
        hh = dn.HeavyHitters(epsilon=6.0, method="pem", oracle="cms", max_length=8, top_k=16, rows=16,
                             width=256, seed=rng.bytes(32), **extra)
        if not corrected:
            def seed_averaged(stat: Any, data: Any, estimate: Any, heavy: Any) -> Any:
                return estimate.frequencies, np.asarray(estimate.std_errors, dtype=float)

            hh.oracle.without_collisions = seed_averaged  # type: ignore[method-assign]
        stat = hh.aggregate(hh.privatize_many(values, rng=rng))
        held = set(values)
        bad += any(v not in held for v in hh.identify(stat).values)
    return bad


def runs_with_false_fragments(rng: np.random.Generator, runs: int, corrected: bool = True) -> int:
    """How many of ``runs`` seeded SFP discoveries keep, at one position, a fragment no device's item has.

    SFP over CMS (16 rows of 256, epsilon 6, so 3 per sketch, max_length 8,
    top_k 16) on the workload of :func:`runs_with_false_discoveries`. Run
    ``j`` looks at position ``1 + j % 9`` (the fragment filter's Bonferroni
    is per position); a kept fragment ``(r, byte)`` there is false when no
    value has piece ``r`` and that byte there. ``corrected=False`` turns off
    the collision correction of the fragment stage.
    """
    bad = 0
    for run in range(runs):
        values = zipf_strings(50_000, rng, words=100, s=2.0, tail=0.25, max_length=8)
        hh = dn.HeavyHitters(epsilon=6.0, method="sfp", oracle="cms", max_length=8, top_k=16, rows=16,
                             width=256, seed=rng.bytes(32))
        if not corrected:
            def seed_averaged(stat: Any, data: Any, estimate: Any, heavy: Any) -> Any:
                return estimate.frequencies, np.asarray(estimate.std_errors, dtype=float)

            hh.oracle.without_collisions = seed_averaged  # type: ignore[method-assign]
        stat = hh.aggregate(hh.privatize_many(values, rng=rng))
        sfp: Any = hh.protocol
        position = 1 + run % hh.levels
        items, _ = hh.items(values)
        true = {(sfp.piece(item), item[position - 1]) for item in items}
        kept = {(r, b) for r, pairs in sfp.fragments(stat.levels[position - 1], position).items() for b, _ in pairs}
        bad += not kept <= true
    return bad
