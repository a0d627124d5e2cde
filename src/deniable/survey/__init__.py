"""Survey analysis of randomized-response designs, as RRreg and rr do it in R.

Designs with RRreg's model names and ``p`` conventions (:mod:`.designs`),
the prevalence by maximum likelihood (:mod:`.prevalence`), and simulated
survey data with known truth (:mod:`.generate`).
"""

from deniable.survey.designs import (
    MODELS,
    CheatingDetection,
    Crosswise,
    Design,
    ForcedResponse,
    Kuk,
    Mangat,
    StochasticLieDetector,
    SymmetricCheatingDetection,
    Triangular,
    UnrelatedQuestion,
    UnrelatedQuestionUnknown,
    Warner,
    design,
)
from deniable.survey.groups import GroupedPrevalence, prevalence_by
from deniable.survey.power import prevalence_power, prevalence_sample_size, simulated_power, standard_error
from deniable.survey.prevalence import (
    PrevalenceFit,
    answer_counts,
    loglik,
    prevalence,
    prevalence_from_counts,
)

__all__ = [
    "MODELS",
    "CheatingDetection",
    "Crosswise",
    "Design",
    "ForcedResponse",
    "Kuk",
    "Mangat",
    "StochasticLieDetector",
    "SymmetricCheatingDetection",
    "Triangular",
    "UnrelatedQuestion",
    "UnrelatedQuestionUnknown",
    "Warner",
    "design",
    "PrevalenceFit",
    "answer_counts",
    "loglik",
    "prevalence",
    "prevalence_from_counts",
    "GroupedPrevalence",
    "prevalence_by",
    "prevalence_power",
    "prevalence_sample_size",
    "simulated_power",
    "standard_error",
]
