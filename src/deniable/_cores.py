"""How many threads a batch may use: the CPUs of this process, and whether this thread may start its own.

Large batches are split over threads where the work releases the GIL (the
OS CSPRNG, numpy's loops, the compiled kernels): one part per CPU this
process may run on (its affinity, not the machine's count). Counting splits
only in the main thread of the main process: a Dask worker, thread or
process, or a server's worker already has its share of the cores, and a
split there would put the cores' square of threads on them.
"""

from __future__ import annotations

import multiprocessing
import os
import threading

__all__ = ["cores", "may_split"]


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def may_split() -> bool:
    """Whether the calling thread may split its work over threads of its own: the main thread of a
    process that is not a worker of another (``multiprocessing``'s children are)."""
    return threading.current_thread() is threading.main_thread() and multiprocessing.parent_process() is None
