"""How far the normal-approximation power is from the real Wald test's, inside and outside its margin.

    python tools/power_accuracy.py              # the grid, 4,000 simulated surveys per point (about an hour)
    python tools/power_accuracy.py --reps 500   # a quicker, noisier look

For every design of :mod:`deniable.survey` (one parameter setting each),
pairs of prevalence and null value, and sample sizes from 60 to 10,000, it
prints :func:`~deniable.survey.prevalence_power` (the formula),
:func:`~deniable.survey.simulated_power` (the real test) and
:func:`~deniable.survey.approximation_margin`, then the largest difference
inside and outside the rule (margin at least :data:`deniable.survey.MARGIN`,
n at least :data:`deniable.survey.MIN_N`). Points whose formula
power is under 0.04 or above 0.995 are skipped (nothing to compare). These
figures back the rule stated in :mod:`deniable.survey._power`.
"""

from __future__ import annotations

import argparse
import warnings
import zlib

import deniable.survey as sv
from deniable.errors import PowerApproximationWarning

DESIGNS = {
    "Warner": (sv.Warner(0.75), None),
    "FR": (sv.ForcedResponse(("1/6", "1/6")), None),
    "Kuk": (sv.Kuk((0.7, 0.3), cards=3), None),
    "Mangat": (sv.Mangat(0.7), None),
    "Crosswise": (sv.Crosswise(0.25), None),
    "Triangular": (sv.Triangular(0.25), None),
    "UQ": (sv.UnrelatedQuestion((0.6, 0.3)), None),
    "UQU": (sv.UnrelatedQuestionUnknown((0.7, 0.3)), 0.3),
    "CDM": (sv.CheatingDetection((0.2, 0.6)), 0.1),
    "CDM (0.3, 0.7)": (sv.CheatingDetection((0.3, 0.7)), 0.3),
    "CDMsym": (sv.SymmetricCheatingDetection((0.2, 0.3, 0.3, 0.2)), 0.1),
    "SLD": (sv.StochasticLieDetector((0.3, 0.7)), 0.8),
    "SLD (0.2, 0.8)": (sv.StochasticLieDetector((0.2, 0.8)), 0.95),
}
PAIRS = [(0.05, 0), (0.1, 0), (0.2, 0), (0.15, 0.1), (0.3, 0.2), (0.2, 0.3), (0.5, 0.4), (0.8, 0.9), (0.9, 0.8)]
SIZES = [60, 100, 200, 400, 1000, 3000, 10000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000, help="simulated surveys per point")
    args = parser.parse_args()
    warnings.simplefilter("ignore", PowerApproximationWarning)
    inside, outside = [], []
    print(f"{'design':16} {'pi':>5} {'pi0':>5} {'n':>6} {'formula':>8} {'simulated':>9} {'margin':>7}")
    for name, (design, extra) in DESIGNS.items():
        for pi, pi0 in PAIRS:
            for n in SIZES:
                try:
                    formula = sv.prevalence_power(design, pi, n, pi0, extra=extra)
                except ValueError:  # pi + gamma above 1: not a population
                    continue
                if not 0.04 < formula < 0.995:
                    continue
                seed = zlib.crc32(repr((name, pi, pi0, n)).encode())
                simulated = sv.simulated_power(design, pi, n, pi0, extra=extra, replicates=args.reps, rng=seed)
                margin = sv.approximation_margin(design, pi, n, extra)
                row = (abs(formula - simulated), name, pi, pi0, n)
                (inside if margin >= sv.MARGIN and n >= sv.MIN_N else outside).append(row)
                print(f"{name:16} {pi:5g} {pi0:5g} {n:6d} {formula:8.3f} {simulated:9.3f} {margin:7.2f}", flush=True)
    for label, rows in (("inside", inside), ("outside", outside)):
        if rows:
            worst = max(rows)
            print(f"{label} the rule: {len(rows)} points, largest difference {worst[0]:.3f} at {worst[1:]}")


if __name__ == "__main__":
    main()
