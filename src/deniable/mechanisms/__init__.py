"""Randomized-response mechanisms, one module per family.

The families are imported simplest first: that is the order of the registry
(:mod:`deniable.mechanisms.registry`), in which the planner breaks ties.
"""

# isort: off
from deniable.mechanisms.contract import CheckedReports, Mechanism
from deniable.mechanisms.frequency import FrequencyOracle
from deniable.mechanisms.domain import Domain
from deniable.mechanisms.binary import BinaryRR
from deniable.mechanisms.kary import GRR
from deniable.mechanisms.unary import OUE, SUE
from deniable.mechanisms.hashing import BLH, OLH
from deniable.mechanisms.hadamard import HadamardResponse
from deniable.mechanisms.subset import SubsetSelection
from deniable.mechanisms.rappor import RAPPOR, RapporClient, RapporEstimate
from deniable.mechanisms.sketch import CountMeanSketch, HadamardCountMeanSketch
from deniable.mechanisms.numeric import (
    Duchi,
    Gaussian,
    Hybrid,
    Laplace,
    MeanStat,
    NumericMechanism,
    Piecewise,
    SquareWave,
)
from deniable.mechanisms.chained import LGRR, LOSUE, LongitudinalClient
from deniable.mechanisms.telemetry import DBitFlip, DBitFlipClient, OneBitMean, OneBitMeanClient
# isort: on

__all__ = [
    "Mechanism",
    "CheckedReports",
    "FrequencyOracle",
    "Domain",
    "BinaryRR",
    "GRR",
    "SUE",
    "OUE",
    "BLH",
    "OLH",
    "HadamardResponse",
    "SubsetSelection",
    "RAPPOR",
    "RapporClient",
    "RapporEstimate",
    "CountMeanSketch",
    "HadamardCountMeanSketch",
    "NumericMechanism",
    "MeanStat",
    "Laplace",
    "Gaussian",
    "Duchi",
    "Piecewise",
    "Hybrid",
    "SquareWave",
    "LGRR",
    "LOSUE",
    "LongitudinalClient",
    "OneBitMean",
    "OneBitMeanClient",
    "DBitFlip",
    "DBitFlipClient",
]
