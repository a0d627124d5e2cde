"""Reports of the range mechanisms as columns of their ``transition_matrix`` (for the sampler tests)."""

from __future__ import annotations

import numpy as np

import deniable as dn


def output_index(m: object, reports: np.ndarray) -> np.ndarray:
    """Each report's column in ``m.transition_matrix()``'s outputs."""
    outputs, _ = m.transition_matrix()  # type: ignore[attr-defined]
    where = {o: i for i, o in enumerate(outputs)}
    if isinstance(m, dn.HaarHRR):
        keys = [(int(r["level"]), int(r["index"]), int(r["bit"])) for r in reports]
    elif m.oracle == "oue":  # type: ignore[attr-defined]
        keys = []
        for r in reports:
            k = m.oracles[int(r["level"]) - 1].k  # type: ignore[attr-defined]
            keys.append((int(r["level"]), tuple(int(b) for b in np.unpackbits(r["bits"], count=k))))
    else:
        keys = [(int(r["level"]), (int(r["seed"]), int(r["value"]))) for r in reports]
    return np.array([where[k] for k in keys])
