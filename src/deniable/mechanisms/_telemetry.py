"""Microsoft's telemetry mechanisms: 1BitMean (counters) and dBitFlip (histograms).

Ding, Kulkarni, Yekhanin, "Collecting Telemetry Data Privately", NeurIPS
2017. Both are built for collecting the same counter every day from the same
devices: each device memoizes its randomness (:meth:`OneBitMean.client`,
:meth:`DBitFlip.client`), so reports repeat while the value stays put and the
lifetime privacy loss is that of one collection.

1BitMean is in :mod:`deniable.mechanisms._one_bit_mean`, dBitFlip in
:mod:`deniable.mechanisms._dbitflip`, and what they share (memoized draws,
their privacy over repeated collection, output perturbation with ``gamma=``)
in :mod:`deniable.mechanisms._perturbation`; every name is importable from here.
"""

from __future__ import annotations

# 1BitMean registers first, as before the split (the registry's order)
# isort: off
from deniable.mechanisms._one_bit_mean import OneBitMean, OneBitMeanClient
from deniable.mechanisms._dbitflip import DBitFlip, DBitFlipClient, sample_subsets
# isort: on

__all__ = ["OneBitMean", "DBitFlip", "OneBitMeanClient", "DBitFlipClient", "sample_subsets"]
