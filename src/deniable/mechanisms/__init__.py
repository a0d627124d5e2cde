"""Randomized-response mechanisms, one module per family."""

from deniable.mechanisms.base import MECHANISMS, FrequencyOracle
from deniable.mechanisms.binary import BinaryRR
from deniable.mechanisms.domain import Domain
from deniable.mechanisms.hadamard import HadamardResponse
from deniable.mechanisms.hashing import BLH, OLH
from deniable.mechanisms.kary import GRR
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
from deniable.mechanisms.rappor import RAPPOR, RapporClient
from deniable.mechanisms.subset import SubsetSelection
from deniable.mechanisms.unary import OUE, SUE

__all__ = [
    "MECHANISMS",
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
    "NumericMechanism",
    "MeanStat",
    "Laplace",
    "Gaussian",
    "Duchi",
    "Piecewise",
    "Hybrid",
    "SquareWave",
]
