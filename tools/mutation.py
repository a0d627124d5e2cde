"""Mutation testing of the core, one module at a time (mutmut 3).

    pip install -e '.[all,mutation]'
    python tools/mutation.py intervals          # one module
    python tools/mutation.py --list             # the modules and their tests
    python tools/mutation.py core               # the core modules, in order
    python tools/mutation.py all                # every module (hours on 2 cores)
    python tools/mutation.py mechanisms.numeric.window --timeout-multiplier 2 \
        --mutants 'deniable.mechanisms._numeric.window.x_calibrate_window__mutmut_*'

Each run copies ``src/``, ``tests/`` and ``pyproject.toml`` into
``build/mutation/<module>/``, adds a ``[tool.mutmut]`` section that mutates
only that module and selects only the tests named for it below, and runs
``mutmut run`` at low priority (``nice -n 10``). mutmut runs, for each mutant,
only the selected tests that call the mutated function. At the end the
survivors are listed (``mutmut show <name>`` in that directory prints the
diff) and the score is printed as ``killed / (killed + survived)``; mutants
that no selected test reaches count as survivors. Known equivalent mutants
are listed in MUTATION.md, not filtered here.

Not part of the normal test run: it takes minutes to hours per module.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

UNIT = "tests/unit"
STAT = "tests/stat"
NUMERIC = "tests/numeric"

# module (dotted, under deniable, without the ``_`` of private names) -> the tests that exercise it. Keep these
# lists small: every mutant runs the listed tests that reach its function.
MODULES: dict[str, list[str]] = {
    "intervals": [f"{UNIT}/test_intervals.py", f"{UNIT}/test_estimate.py"],
    "estimate": [f"{UNIT}/test_estimate.py", f"{UNIT}/test_consistency.py", f"{UNIT}/test_html.py"],
    "consistency": [f"{UNIT}/test_consistency.py", f"{UNIT}/test_estimate.py"],
    "privacy": [f"{UNIT}/test_privacy.py", f"{UNIT}/test_unary.py", f"{UNIT}/test_frequency.py"],
    "randomness": [
        f"{UNIT}/test_randomness_bytes.py", f"{UNIT}/test_randomness_unit.py", f"{UNIT}/test_accelerate.py",
        f"{STAT}/test_randomness.py",
    ],
    "aggregates": [f"{UNIT}/test_aggregates.py"],
    "accelerate": [f"{UNIT}/test_accelerate.py", f"{UNIT}/test_randomness_bytes.py", f"{UNIT}/test_sketch_kernels.py"],
    "_runs_numba": [f"{UNIT}/test_accelerate.py", f"{UNIT}/test_randomness_bytes.py"],
    # the sparse sampler against its exact reference (both backends, crafted straddling words) and its
    # calibrated check on 10^7 bits (3 s); test_accelerate.py only chooses the gap decoder, never calls it
    "skips": [f"{UNIT}/test_skips.py", f"{STAT}/test_sparse_bits.py::test_sparse_bits_are_bernoulli"],
    # the unit tests only: with the JIT off the stat test's numba half runs as Python (15 s per mutant)
    "_skips_numba": [f"{UNIT}/test_skips.py"],
    # the column counts against the unpacked bit sums (both backends, both bit orders, across the
    # 255-report lanes and numpy's blocks), the backend's choice, the byte-spreading table; not the
    # mechanisms' files
    "columns": [
        f"{UNIT}/test_sketch_kernels.py::test_column_counts_are_the_bit_sums",
        f"{UNIT}/test_sketch_kernels.py::test_column_counts_use_the_compiled_loop_as_the_setting_says",
        f"{UNIT}/test_sketch_kernels.py::test_spread_table_puts_bit_c_of_a_byte_in_byte_lane_c",
        f"{UNIT}/test_unary.py::test_support_counts_equal_unpacked_column_sums",
        f"{UNIT}/test_unary.py::test_support_counts_cross_chunks",
    ],
    **{
        f"mechanisms.{name}": [
            f"{UNIT}/test_{name}.py", f"{UNIT}/test_frequency.py", f"{UNIT}/test_contract.py",
            f"{UNIT}/test_wire.py", f"{UNIT}/test_randomness_bytes.py", f"{STAT}/test_samplers.py",
        ]
        for name in ("binary", "kary", "unary", "hashing", "hadamard", "subset", "rappor")
    },
    # the unit tests only: not test_rappor.py's statistical decode test (200 surveys, 9 s of CPU per
    # mutant that survives the others) nor its black-box audit (a mutant of the audit cells' masks runs
    # it for minutes; the cells are checked exactly by test_audit_events_follow_...), nor the state test
    # that decodes in a subprocess (which imports the installed package, never a mutant); the grid
    # files (frequency, wire, samplers) have no RAPPOR
    "mechanisms.rappor": [
        f"{UNIT}/test_rappor.py::{name}" for name in (
            "test_google_default_parameters",
            "test_defaults_are_googles_16_bits_2_hashes_64_cohorts_p_half_q_three_quarters_sha256",
            "test_sha256_bloom_bits_are_big_endian_words_of_the_digest_of_cohort_type_and_value",
            "test_transition_matrix_privacy_is_exact",
            "test_epsilon_sets_the_lifetime_guarantee", "test_memoized_client_repeats_its_permanent_response",
            "test_config_round_trip_and_validation",
            "test_sparse_decode_equals_dense_pseudo_inverse",
            "test_decode_limits_blas_and_only_blas_to_one_thread_while_it_runs", "test_variance_equals_dense_formula",
            "test_report_checks_name_the_row_and_the_bound", "test_wide_reports_split_into_words",
            "test_supports_means_every_bloom_bit_of_the_category_in_the_reports_cohort",
            "test_audit_events_follow_their_definition_in_every_cohort",
            "test_transition_matrix_entries_are_the_product_over_bits",
            "test_transition_matrix_refuses_more_than_ten_bits_or_2_16_outputs",
            "test_population_target_adds_the_sampling_term",
            "test_bit_rates_of_empty_cohorts_are_silent_and_rates_are_clipped_to_0_1",
            "test_client_keeps_the_given_cohort_and_checks_it", "test_repr_names_the_parameters_and_a_google_hashing",
            "test_estimate_fields_and_the_clipped_sampling_term",
            "test_integer_probabilities_round_f_up_and_p_q_to_nearest",
            "test_size_and_probability_checks_at_their_bounds",
        )
    ] + [
        f"{UNIT}/test_rappor_state.py::{name}" for name in (
            "test_same_state_same_permanent_response", "test_state_of_another_configuration_is_refused",
            "test_state_and_explicit_secret_are_exclusive_and_cohort_is_checked",
            "test_explicit_secret_keeps_its_old_permanent_responses",
        )
    ] + [
        f"{UNIT}/test_rappor_google.py", f"{UNIT}/test_contract.py",
        f"{STAT}/test_rappor_bits.py::test_prr_bits_follow_f",  # the clients' PRR: no unit test sees its law
    ],
    "mechanisms.hashing": [
        f"{UNIT}/test_hashing.py", f"{UNIT}/test_olh_buckets.py", f"{UNIT}/test_frequency.py",
        f"{UNIT}/test_contract.py", f"{UNIT}/test_wire.py", f"{UNIT}/test_randomness_bytes.py",
        f"{STAT}/test_samplers.py",
    ],
    # the sketches' sampler and audit tests, not their 2,000-replicate estimator tests (a minute per
    # mutant on two loaded cores): the estimator's arithmetic is checked exactly in test_sketch_exact.py
    **{
        f"mechanisms.{name}": [
            f"{UNIT}/test_sketch.py", f"{UNIT}/test_sketch_exact.py", f"{UNIT}/test_sketch_kernels.py",
            f"{UNIT}/test_contract.py", f"{UNIT}/test_wire.py",
            f"{STAT}/test_sketch_estimators.py::test_sampler_matches_exact_distribution",
            f"{STAT}/test_sketch_estimators.py::test_privacy_audit",
        ]
        for name in ("sketch", "sketch_base", "sketch_hashing", "sketch_counts")
    },
    **{
        f"mechanisms.{name}": [
            f"{UNIT}/test_longitudinal_exact.py", f"{UNIT}/test_output_perturbation.py",
            f"{UNIT}/test_contract.py", f"{UNIT}/test_wire.py",
        ]
        for name in ("one_bit_mean", "dbitflip", "perturbation")
    },
    "mechanisms.chained": [f"{UNIT}/test_longitudinal_exact.py", f"{UNIT}/test_contract.py", f"{UNIT}/test_wire.py"],
    "mechanisms.permanent": [f"{UNIT}/test_longitudinal_exact.py", f"{UNIT}/test_output_perturbation.py"],
    "mechanisms.walsh": [f"{UNIT}/test_walsh.py", f"{UNIT}/test_hadamard.py", f"{UNIT}/test_hashing.py"],
    # with the threaded secure batches (the base's privatize_many splits them; test_frequency_batches.py
    # checks the split exactly, test_large_secure_batches the halves' distribution)
    "mechanisms.frequency": [
        f"{UNIT}/test_frequency.py", f"{UNIT}/test_frequency_batches.py", f"{UNIT}/test_estimate.py",
        f"{STAT}/test_estimators.py", f"{STAT}/test_samplers.py::test_large_secure_batches",
    ],
    **{
        f"mechanisms.{name}": [f"{UNIT}/test_{name}.py", f"{UNIT}/test_contract.py", f"{UNIT}/test_wire.py"]
        for name in ("domain", "contract", "registry")
    },
    "survey.designs": [
        "tests/survey/test_designs.py", "tests/survey/test_design_details.py", "tests/survey/test_design_audit.py",
        "tests/survey/test_reference_r.py",
    ],
    # the likelihood-level tests of test_regression_exact.py (not its statsmodels-results ones: seconds each)
    "survey.likelihood": [
        f"tests/survey/test_regression_exact.py::{name}" for name in (
            "test_loglike_is_sum_of_log_response_probabilities", "test_score_and_hessian_are_exact",
            "test_fit_solves_the_score_equations", "test_bad_responses_and_groups", "test_perfect_separation_is_named",
        )
    ] + ["tests/survey/test_likelihood_maximize.py"],
    "client_state": [f"{UNIT}/test_client_state.py"],
    # discovery (heavy hitters): the unit tests; not the calibrated recall runs of tests/stat (seconds each)
    **{
        f"heavy.{name}": [
            f"{UNIT}/test_heavy.py", f"{UNIT}/test_heavy_alphabet.py", f"{UNIT}/test_heavy_quality.py",
            f"{UNIT}/test_heavy_protocols.py",
        ]
        for name in ("items", "protocols", "hitters", "results", "quality")
    },
    # the exact, API and sampler/estimator tests; not the black-box audits (9 of 41 s), which
    # check by sampling the laws that test_numeric_exact.py checks exactly
    **{
        f"mechanisms.numeric.{name}": [
            f"{UNIT}/test_contract.py", f"{NUMERIC}/test_numeric_api.py", f"{NUMERIC}/test_numeric_exact.py",
            f"{NUMERIC}/test_numeric_properties.py", f"{NUMERIC}/test_numeric_stat.py",
        ] + ([f"{NUMERIC}/test_numeric_alias.py"] if name == "alias" else [])
        for name in (
            "additive", "alias", "base", "duchi", "hybrid", "lattice", "piecewise", "square_wave", "window",
        )
    },
    # the reconstruction alone: its exact tests against the dense channel, and SquareWave's histogram
    "mechanisms.numeric.em": [
        f"{NUMERIC}/test_numeric_em.py",
        f"{NUMERIC}/test_numeric_api.py::test_square_wave_estimate_carries_a_histogram",
    ],
}

# Modules whose code is reached through functools caches (the noise lattices, the sliding
# windows). mutmut forks each mutant's run from a process that already ran the unmutated tests,
# so a warm cache would hand the mutant's tests the unmutated result; for these modules the
# scratch copy's tests/conftest.py empties every cache of the package when a run starts.
# (mutmut 3 does not mutate decorated functions, so the cached functions' own bodies are not
# mutated; their callees are.)
CACHED = {module for module in MODULES if module.startswith("mechanisms.numeric.")}
CLEAR_CACHES = """

def pytest_sessionstart(session):  # added by tools/mutation.py: no cached result outlives a mutant
    import sys

    for name, module in list(sys.modules.items()):
        if name == "deniable" or name.startswith("deniable."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
"""

# environment per module: the numba kernel runs as plain Python, where mutmut's trampolines work
# (numba cannot compile them); the compiled and the Python kernel are the same code
ENV: dict[str, dict[str, str]] = {name: {"NUMBA_DISABLE_JIT": "1"} for name in ("_runs_numba", "_skips_numba")}

# the modules the issue names first, in this order
CORE = ["intervals", "estimate", "consistency", "privacy", "randomness", "aggregates",
        "mechanisms.unary", "mechanisms.binary", "mechanisms.kary"]


def module_path(module: str) -> str:
    """The file of ``module`` (named without the leading ``_`` of private modules and packages)."""
    path = ROOT / "src" / "deniable"
    parts = module.split(".")
    for i, part in enumerate(parts):
        suffix = ".py" if i == len(parts) - 1 else ""
        path = path / (part if (path / f"{part}{suffix}").exists() else f"_{part.lstrip('_')}")
    return str(path.relative_to(ROOT)) + ".py"


def existing_tests(module: str) -> list[str]:
    """The module's test paths (or ``path::test`` node ids) that exist in this checkout (others are skipped)."""
    return [p for p in dict.fromkeys(MODULES[module]) if (ROOT / p.split("::")[0]).exists()]


def prepare(module: str, workdir: Path, timeout_multiplier: float | None = None) -> None:
    """A scratch copy of the repository whose pyproject.toml configures mutmut for ``module``.

    ``timeout_multiplier`` replaces mutmut's 15: a mutant is stopped after
    ``2 x multiplier x (its tests' time + 1 s)`` CPU seconds or half that in wall time,
    whichever comes first, and counts as a timeout (a mutant that loops for ever otherwise
    costs 30 times its tests' time before it counts as killed). The tests' time is their
    wall time in mutmut's first run: on a loaded machine a small multiplier also stops
    slow mutants that would pass.
    """
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules", ".hypothesis", ".pytest_cache")
    shutil.copytree(ROOT / "src", workdir / "src", ignore=ignore)
    shutil.copytree(ROOT / "tests", workdir / "tests", ignore=ignore)
    for name in ("README.md", "MUTATION.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, workdir / name)
    shutil.copytree(ROOT / "examples" / "data", workdir / "examples" / "data")  # the survey data some tests read
    tests = existing_tests(module)
    config = (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = [{json.dumps(module_path(module))}]\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
        'pytest_add_cli_args = ["-m", "not slow and not postgres and not browser", "-p", "no:cacheprovider", "-q"]\n'
        'also_copy = ["examples/data"]\n'
        "use_git_change_detection = false\n"
    )
    if timeout_multiplier is not None:
        config += f"timeout_multiplier = {float(timeout_multiplier)!r}\n"
    if module in CACHED:
        with (workdir / "tests" / "conftest.py").open("a") as conftest:
            conftest.write(CLEAR_CACHES)
    (workdir / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + config)


def results(workdir: Path) -> dict[str, list[str]]:
    """mutmut's verdicts, grouped: ``{"killed": [...], "survived": [...], ...}``."""
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=workdir, capture_output=True, text=True, check=True,
    ).stdout
    grouped: dict[str, list[str]] = {}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            grouped.setdefault(status.strip(), []).append(name)
    return grouped


def change(workdir: Path, name: str) -> str:
    """The changed line of a mutant, as ``old  ->  new`` (from ``mutmut show``)."""
    diff = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name], cwd=workdir, capture_output=True, text=True
    ).stdout.splitlines()
    old = [line[1:].strip() for line in diff if line.startswith("-") and not line.startswith("---")]
    new = [line[1:].strip() for line in diff if line.startswith("+") and not line.startswith("+++")]
    return f"{' / '.join(old) or '(nothing)'}  ->  {' / '.join(new) or '(deleted)'}"


def run(
    module: str, children: int, report_only: bool = False, mutants: list[str] | None = None,
    timeout_multiplier: float | None = None,
) -> dict[str, list[str]]:
    workdir = ROOT / "build" / "mutation" / module
    start = time.monotonic()
    if not report_only:
        prepare(module, workdir, timeout_multiplier)
        env = dict(os.environ, CI="1", **ENV.get(module, {}))
        cmd = ["nice", "-n", "10", sys.executable, "-m", "mutmut", "run", "--max-children", str(children)]
        cmd += mutants or []
        subprocess.run(cmd, cwd=workdir, env=env, check=False, stdout=subprocess.DEVNULL)
    grouped = results(workdir)
    killed = len(grouped.get("killed", [])) + len(grouped.get("timeout", []))
    missed = [n for status, names in grouped.items() if status not in ("killed", "timeout") for n in names]
    total = killed + len(missed)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"\n{module}: {killed}/{total} mutants killed ({100 * killed / max(total, 1):.1f}%)")
    if not report_only:
        cpu = usage.ru_utime + usage.ru_stime
        load = os.getloadavg()[0]
        print(f"run took {time.monotonic() - start:.0f} s wall, {cpu:.0f} s CPU (load average {load:.1f})")
    for status, names in sorted(grouped.items()):
        if status not in ("killed", "timeout"):
            print(f"  {status}: {len(names)}")
            if mutants and status == "not checked":
                continue  # the mutants not named this time
            for name in names:
                print(f"    {name}: {change(workdir, name)}")
    print(f"diffs: cd {workdir.relative_to(ROOT)} && python -m mutmut show <name>")
    return grouped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "modules", nargs="*", help="modules under deniable (e.g. intervals, mechanisms.unary), 'core' or 'all'"
    )
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--report", action="store_true", help="only print the last run's results")
    parser.add_argument("--children", type=int, default=2, help="parallel mutant runs (default 2)")
    parser.add_argument(
        "--mutants", nargs="+", metavar="PATTERN",
        help="run only the mutants whose names match these (fnmatch) patterns; the others count as 'not checked'",
    )
    parser.add_argument(
        "--timeout-multiplier", type=float, metavar="X",
        help="stop a mutant after 2 X (its tests' time + 1 s) CPU seconds or X (its tests' time + 1 s) "
        "seconds of wall time (mutmut's default X: 15)",
    )
    args = parser.parse_args(argv)
    if args.list or not args.modules:
        for module in MODULES:
            print(f"{module:32} {' '.join(existing_tests(module))}")
        return 0
    modules = {"all": list(MODULES), "core": CORE}.get(args.modules[0], args.modules)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; choose from {sorted(MODULES)} or 'all'")
    for module in modules:
        run(module, args.children, args.report, args.mutants, args.timeout_multiplier)
    return 0


if __name__ == "__main__":
    sys.exit(main())
