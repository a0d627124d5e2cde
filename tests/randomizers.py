"""One configured instance of every randomizer deniable registers, with a true value it takes.

Tests that must hold for *every* randomizer (a list of single reports is a
batch; the wire round trip) iterate over :data:`RANDOMIZERS`; a test in
``tests/unit/test_single_reports.py`` fails when a wire id is registered
without an entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import deniable as dn
from deniable.mechanisms import registry


@dataclass(frozen=True)
class Randomizer:
    wire_id: str
    build: Callable[[], Any]
    value: Any  # a true value the randomizer accepts

    @property
    def id(self) -> str:
        """The wire id, and a survey design's model or a discovery's method."""
        if self.wire_id == "heavy-hitters":
            return f"heavy-hitters-{self.build().method}"
        if self.wire_id != "rr-design":
            gamma = "flip_numerator" in self.build().to_config()["params"]  # output perturbation
            return f"{self.wire_id}-gamma" if gamma else self.wire_id
        params = self.build().to_config()["params"]
        return f"rr-design-{params['model']}-{len(params.get('p', params.get('matrix')))}"


RANDOMIZERS: list[Randomizer] = [
    Randomizer("binary-rr", lambda: dn.BinaryRR(epsilon=1.0), True),
    Randomizer("grr", lambda: dn.GRR(["a", "b", "c"], epsilon=1.0), "b"),
    Randomizer("sue", lambda: dn.SUE(5, epsilon=1.0), 3),
    Randomizer("oue", lambda: dn.OUE(["x", "y", "z"], epsilon=1.0), "z"),
    Randomizer("blh", lambda: dn.BLH(5, epsilon=1.0), 1),
    Randomizer("olh", lambda: dn.OLH(5, epsilon=1.0), 4),
    Randomizer("hadamard", lambda: dn.HadamardResponse(5, epsilon=1.0), 2),
    Randomizer("subset", lambda: dn.SubsetSelection(6, epsilon=1.0), 5),
    Randomizer("rappor", lambda: dn.RAPPOR(["a", "b", "c"], epsilon=2.0), "c"),
    Randomizer("cms", lambda: registry.entry("cms").cls(epsilon=2.0), "some text"),
    Randomizer("hcms", lambda: registry.entry("hcms").cls(epsilon=2.0), "some text"),
    Randomizer("laplace", lambda: dn.Laplace(0, 10, epsilon=1.0), 2.5),
    Randomizer("gaussian", lambda: dn.Gaussian(0, 10, epsilon=1.0, delta=1e-6), 2.5),
    Randomizer("duchi", lambda: dn.Duchi(0, 10, epsilon=1.0), 2.5),
    Randomizer("piecewise", lambda: dn.Piecewise(0, 10, epsilon=1.0), 2.5),
    Randomizer("square-wave", lambda: dn.SquareWave(0, 10, epsilon=1.0), 2.5),
    Randomizer("hybrid", lambda: dn.Hybrid(0, 10, epsilon=1.0), 2.5),
    Randomizer("l-grr", lambda: registry.entry("l-grr").cls(4, epsilon_perm=2.0, epsilon_1=1.0), 3),
    Randomizer("l-osue", lambda: registry.entry("l-osue").cls(4, epsilon_perm=2.0, epsilon_1=1.0), 0),
    Randomizer("one-bit-mean", lambda: registry.entry("one-bit-mean").cls(0, 10, epsilon=1.0), 2.5),
    Randomizer("dbitflip", lambda: registry.entry("dbitflip").cls(8, epsilon=1.0, d=2), 5),
    Randomizer("one-bit-mean", lambda: registry.entry("one-bit-mean").cls(0, 10, epsilon=1.0, gamma=0.1), 2.5),
    Randomizer("dbitflip", lambda: registry.entry("dbitflip").cls(8, epsilon=1.0, d=2, gamma=0.1), 5),
    Randomizer("rr-design", lambda: dn.survey.design("Warner", 0.7), True),
    Randomizer("rr-design", lambda: dn.survey.design("FR", ["1/10", "1/10", "1/10"]), 2),
    Randomizer("rr-design", lambda: dn.survey.design("Kuk", [0.6, 0.3], Kukrep=3), False),
    Randomizer("rr-design", lambda: dn.survey.design("CDM", [0.3, 0.6]), True),
    Randomizer("rr-design", lambda: dn.survey.design("UQTunknown", [0.3, 0.7]), {"answer": True, "unrelated": False}),
    Randomizer("rr-design", lambda: dn.survey.Custom([["1/2", "3/10", "1/5"], ["1/10", "3/10", "3/5"]]), True),
    Randomizer(
        "heavy-hitters", lambda: dn.HeavyHitters(epsilon=4.0, max_length=4, top_k=4, rows=16, width=64), "ab"
    ),
    Randomizer(
        "heavy-hitters",
        lambda: dn.HeavyHitters(epsilon=4.0, method="sfp", max_length=2, top_k=4, rows=16, width=64),
        "ab",
    ),
    Randomizer("joint", lambda: dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=2.0), ("yes", "B")),
    Randomizer("joint", lambda: dn.Joint([0, 1, 2], [True, False], epsilon=1.0, mechanism="oue"), (2, False)),
    Randomizer(
        "marginal-release", lambda: dn.MarginalRelease(["a", "b"], 3, [True, False], epsilon=2.0), ("b", 2, True),
    ),
    Randomizer(
        "marginal-release", lambda: dn.MarginalRelease(2, 3, 2, 2, epsilon=1.0, size=3, mechanism="oue"), (1, 2, 0, 1),
    ),
    Randomizer("hierarchical-histogram", lambda: dn.HierarchicalHistogram(0, 10, bins=16, epsilon=1.0), 2.5),
    Randomizer(
        "hierarchical-histogram", lambda: dn.HierarchicalHistogram(0, 10, bins=8, branching=2, epsilon=1.0,
                                                                    oracle="olh"), 9.5,
    ),
    Randomizer("haar-hrr", lambda: dn.HaarHRR(0, 10, bins=16, epsilon=1.0), 2.5),
    Randomizer("set-valued", lambda: dn.SetValued(["a", "b", "c", "d"], epsilon=1.0, max_items=2), ["d", "a"]),
    Randomizer("set-valued", lambda: dn.SetValued(range(40), epsilon=2.0, max_items=3, oracle="olh"), [3, 7]),
    Randomizer("pckv", lambda: dn.PCKV(["a", "b", "c"], epsilon=1.0, max_pairs=2), {"a": 0.5, "c": -1.0}),
    Randomizer("pckv", lambda: dn.PCKV(range(12), epsilon=2.0, max_pairs=3, ell=2, variant="grr"), [(3, 0.2)]),
]
