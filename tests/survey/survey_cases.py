"""The design grid the survey tests share: every RRreg model at example ``p`` and a true state.

Each case is ``(model, p, cards, truth)`` where ``truth`` holds the true
parameters (``pi`` and the extra parameter of a two-group design).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import deniable.survey as sv

CASES: list[tuple[str, Any, int, dict[str, float]]] = [
    ("Warner", 0.7, 1, {"pi": 0.3}),
    ("Crosswise", 0.25, 1, {"pi": 0.2}),
    ("Triangular", 0.3, 1, {"pi": 0.25}),
    ("Mangat", 0.6, 1, {"pi": 0.3}),
    ("Kuk", (0.7, 0.3), 1, {"pi": 0.35}),
    ("Kuk", (0.7, 0.3), 3, {"pi": 0.35}),
    ("UQTknown", (0.7, "1/12"), 1, {"pi": 0.2}),
    ("UQTunknown", (0.7, 0.3), 1, {"pi": 0.3, "piUQ": 0.4}),
    ("FR", ("1/6", "1/6"), 1, {"pi": 0.25}),
    ("FR", (0.1, 0.15, 0.05), 1, {"pi0": 0.5, "pi1": 0.3, "pi2": 0.2}),
    ("SLD", (0.3, 0.7), 1, {"pi": 0.3, "t": 0.8}),
    ("CDM", (0.2, 0.6), 1, {"pi": 0.3, "gamma": 0.1}),
    ("CDMsym", (0.2, 0.3, 0.4, 0.1), 1, {"pi": 0.3, "gamma": 0.1}),
]

IDS = [f"{m}-{'-'.join(map(str, np.atleast_1d(p)))}-{c}" for m, p, c, _ in CASES]


def build(model: str, p: Any, cards: int) -> sv.Design:
    return sv.design(model, p, Kukrep=cards)


def draw_counts(
    d: sv.Design, truth: dict[str, float], n_by_group: tuple[int, ...], rng: np.random.Generator, size: int
) -> np.ndarray:
    """``size`` replicate count tables ``[replicate, group, answer]`` under the sampling model."""
    return np.stack(
        [rng.multinomial(n_g, d.response_probabilities(truth, g + 1), size=size) for g, n_g in enumerate(n_by_group)],
        axis=1,
    )
