"""Randomized-response mechanisms, one module per family.

The families are imported simplest first: that is the order of the registry
(:mod:`deniable.mechanisms.registry`), in which the planner breaks ties.
"""

# isort: off
from deniable.mechanisms._contract import CheckedReports, Mechanism
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._binary import BinaryRR
from deniable.mechanisms._kary import GRR
from deniable.mechanisms._unary import OUE, SUE
from deniable.mechanisms._hashing import BLH, OLH
from deniable.mechanisms._hadamard import HadamardResponse
from deniable.mechanisms._subset import SubsetSelection
from deniable.mechanisms._rappor import RAPPOR, RapporClient, RapporEstimate
from deniable.mechanisms._sketch import CountMeanSketch, HadamardCountMeanSketch
from deniable.mechanisms._numeric import (
    Duchi,
    Gaussian,
    Hybrid,
    Laplace,
    MeanStat,
    NumericMechanism,
    Piecewise,
    SquareWave,
)
from deniable.mechanisms._chained import LGRR, LOSUE, LongitudinalClient
from deniable.mechanisms._telemetry import DBitFlip, DBitFlipClient, OneBitMean, OneBitMeanClient
from deniable.mechanisms._ranges import QuantileEstimate, QueryEstimate, RangeEstimate, RangeMechanism
from deniable.mechanisms._hierarchical import HierarchicalHistogram
from deniable.mechanisms._haar import HaarHRR
from deniable.mechanisms._set_valued import ItemEstimate, SetValued, best_set_length
from deniable.mechanisms._key_value import PCKV
from deniable.mechanisms._key_value_estimate import KeyValueEstimate
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
    "RangeMechanism",
    "RangeEstimate",
    "QueryEstimate",
    "QuantileEstimate",
    "HierarchicalHistogram",
    "HaarHRR",
    "SetValued",
    "ItemEstimate",
    "best_set_length",
    "PCKV",
    "KeyValueEstimate",
]
