"""Free-text survey questions on the server: aggregate size, write cost and results cost.

For a survey with one free-text question (epsilon 6, PEM, the question's
default sketch of 32 x 256) at several ``max_length``, on a SQLite file:
the stored aggregate's size (JSON bytes, one shard: empty, and holding all
the responses), the wall time to store
one response (median over single-response requests: the aggregate is read,
merged and written back in the same transaction), a batch of 1,000
responses, and the results (``identify`` on the merged aggregate) computed
and then answered from the cache. The load average is printed (2 cores, shared).

    python benchmarks/bench_free_text.py            # 2,000 responses per size
    python benchmarks/bench_free_text.py --quick    # tiny smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from deniable.server._results import question_estimates, results_json
from deniable.server._storage import Storage
from deniable.server._surveys import load_survey


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    args = parser.parse_args()
    n, singles, lengths = (200, 3, (8,)) if args.quick else (2_000, 20, (8, 16, 32))
    rng = np.random.default_rng(0)
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores, shared)\n")
    print("| max_length | aggregate JSON (one shard: empty / filled) | store 1 response (median) | store 1,000 | "
          "results (identify) | results (cached) |")
    print("|---|---|---|---|---|---|")
    for max_length in lengths:
        definition = {"id": "bench", "title": "bench", "budget": 6.5, "rate_limit": "off", "questions": [
            {"id": "q", "text": "?", "type": "free-text", "max_length": max_length, "epsilon": 6}]}
        survey = load_survey(definition)
        h = survey.questions[0].hitters  # type: ignore[union-attr]
        words = ["vim", "emacs", "nano", "helix"]
        values = [words[i] for i in rng.integers(0, 4, n // 2)] + [f"t{i}" for i in range(n - n // 2)]
        reports = h.reports_to_json(h.privatize_many(values, rng=rng))
        with tempfile.TemporaryDirectory() as tmp:
            store = Storage(f"sqlite:///{Path(tmp) / 'bench.db'}")
            store.add_survey(definition)
            size = len(json.dumps(survey.questions[0].empty_aggregate().to_json()))
            times = []
            for i in range(singles):
                start = time.perf_counter()
                store.submit("bench", [{"idempotency_key": f"single-{i:06d}", "reports": {"q": reports[i]}}])
                times.append(time.perf_counter() - start)
            rest = reports[singles:]
            batch_times = []
            for start_at in range(0, len(rest), 1000):
                chunk = rest[start_at : start_at + 1000]
                bodies = [{"idempotency_key": f"batch-{start_at + i:06d}", "reports": {"q": r}}
                          for i, r in enumerate(chunk)]
                start = time.perf_counter()
                store.submit("bench", bodies)
                batch_times.append((time.perf_counter() - start) * 1000 / len(chunk))  # seconds per 1,000
            aggregates = store.aggregates("bench")
            filled = len(json.dumps(aggregates["q"].to_json()))
            start = time.perf_counter()
            results_json(survey, question_estimates(survey, aggregates), aggregates=aggregates)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            results_json(survey, question_estimates(survey, aggregates), aggregates=aggregates)
            warm = time.perf_counter() - start
            store.close()
        print(f"| {max_length} | {size / 1e3:.0f} kB / {filled / 1e3:.0f} kB | "
              f"{1e3 * statistics.median(times):.0f} ms | {max(batch_times):.2f} s | {cold:.2f} s | "
              f"{1e3 * warm:.1f} ms |")


if __name__ == "__main__":
    main()
