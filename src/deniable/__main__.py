"""``python -m deniable``: ``deniable demo`` (or any ``deniable`` command given after it).

Without the ``cli`` extra it falls back to :func:`main`, the honor-code
survey simulated in-process:

50,000 students answer "did you break the honor code?" with the two-coin
forced-response design (epsilon = ln 3); 20% truly did. Each answer is
randomized with the OS CSPRNG, and the debiased estimate is printed next to
the truth (these students' own share: ``target="respondents"``) with its
standard error and 95% confidence interval.
"""

from __future__ import annotations

import sys

import numpy as np

import deniable as dn


def main(n: int = 50_000, truth: float = 0.20, seed: int = 2026) -> int:
    # who violated is fixed by the seed; the randomized answers use secure randomness
    population = np.random.default_rng(seed).random(n) < truth
    mechanism = dn.BinaryRR.forced_response(p_truth=0.5, p_yes=0.5)
    reports = mechanism.privatize_many(population)
    est = mechanism.estimate(reports, target="respondents")  # the students themselves
    low, high = est.ci(0.95)
    actual = population.mean()
    print(f"Honor-code survey: {n:,} students, forced response (epsilon = {mechanism.epsilon:.4f})")
    print(f"  'yes' reports        {est.observed[1]:.4f}")
    print(f"  estimated violators  {est.frequencies[1]:.4f}  std. error {est.std_errors[1]:.4f}  "  # type: ignore[index]
          f"95% interval {low[1]:.4f} .. {high[1]:.4f}")
    print(f"  true violators       {actual:.4f}")
    inside = low[1] <= actual <= high[1]
    print(f"  truth inside the interval: {'yes' if inside else 'no'}")
    return 0


if __name__ == "__main__":
    try:  # with the cli extra, ``python -m deniable [COMMAND ...]`` is ``deniable`` (default: demo)
        from deniable.cli import app
    except ImportError:  # core-only install: the in-process simulation above
        sys.exit(main())
    app(sys.argv[1:] or ["demo"], prog_name="python -m deniable")
