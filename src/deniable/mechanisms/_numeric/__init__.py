"""Numeric mechanisms: local DP for bounded real values (means and distributions).

Every mechanism takes a declared range ``(low, high)`` and **clamps** each
value into it before randomizing; clamping is part of the mechanism (it is
what bounds the sensitivity), so estimates are of the clamped values. The
clamped value is mapped to ``t = 2 (x - low) / (high - low) - 1`` in
``[-1, 1]``; reports are returned in the original units. Each mechanism's
stated epsilon holds for the actual finite-precision sampler, computed from
the integer probabilities it samples with:

* :class:`Laplace`, :class:`Gaussian` (:mod:`.additive`): random rounding to
  a lattice plus exact integer noise (:mod:`.lattice`).
* :class:`Duchi` (:mod:`.duchi`): two reports, a 32-bit dyadic mixture of
  an informative and a fair coin.
* :class:`Piecewise`, :class:`SquareWave` (:mod:`.piecewise`,
  :mod:`.square_wave`): a uniform cell or a window of cells whose start
  encodes the value (:mod:`.window`); SquareWave also reconstructs the
  distribution (:mod:`.em`).
* :class:`Hybrid` (:mod:`.hybrid`): Piecewise or Duchi by a value-blind coin.

Randomness: ``rng=None`` (the default) reads ``os.urandom`` through
:mod:`deniable._randomness`; a seed or Generator is for simulation only. In
``privatize_many`` a comparison with a threshold reads one random byte and
more only on a tie (1 in 256 whatever the threshold), so a batch costs about
1.5-4 random bytes per value; ``privatize`` (one device report) does a fixed
amount of work. In Duchi and the window mechanisms every input-dependent
draw sits inside an input-independent mixture, so even the number of bytes
read reveals nothing beyond the bound above.

Estimates are :class:`~deniable.MeanEstimate`; aggregates are
:class:`MeanStat` (n, sum and sum of squares of the standardized reports,
plus cell counts for SquareWave), mergeable with ``+``.

The modules are imported in registry order (Laplace, Gaussian, Duchi,
Piecewise, SquareWave, Hybrid), in which the planner breaks ties.
"""

# isort: off
from deniable._aggregates import MeanStat
from deniable.mechanisms._numeric.base import NumericMechanism
from deniable.mechanisms._numeric.additive import Gaussian, Laplace, two_level_gaussian_mean
from deniable.mechanisms._numeric.duchi import Duchi
from deniable.mechanisms._numeric.piecewise import Piecewise
from deniable.mechanisms._numeric.square_wave import SquareWave
from deniable.mechanisms._numeric.hybrid import EPSILON_STAR, Hybrid
from deniable.mechanisms._numeric.em import em_reconstruct
from deniable.mechanisms._numeric.lattice import analytic_gaussian_sigma, gaussian_epsilon
# isort: on

__all__ = [
    "NumericMechanism",
    "MeanStat",
    "Laplace",
    "Gaussian",
    "Duchi",
    "Piecewise",
    "Hybrid",
    "SquareWave",
    "EPSILON_STAR",
    "analytic_gaussian_sigma",
    "gaussian_epsilon",
    "two_level_gaussian_mean",
    "em_reconstruct",
]
