"""Shared fixtures: one reproducible random stream per test.

Every statistical test draws from the ``rng`` fixture, a numpy Generator
seeded from ``SeedSequence([hash of the test id], TEST_SEED)``. ``TEST_SEED``
comes from the environment variable ``DENIABLE_TEST_SEED`` (default below),
so CI is deterministic and a rerun under another seed is one variable away::

    DENIABLE_TEST_SEED=12345 pytest tests/stat

A failing test that used the fixture prints its seed in the report. With
the environment variable ``CI`` set, Hypothesis runs derandomized.

**Suites.** ``python -m pytest`` with no path runs the *fast* suite: every
test but those marked with one of :data:`HEAVY` (calibrated statistical
grids, privacy audits, browser and PostgreSQL tests, end-to-end runs across
processes, the docs build and mypy). ``--suite rest`` runs exactly those,
``--suite full`` runs everything (what CI runs, as ``.ci/run`` shows);
naming paths, or choosing tests by marker (``-m "stat or audit"``), runs every
matching test unless ``--suite`` says otherwise.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import settings

DEFAULT_TEST_SEED = 20_261_122

# Hypothesis only checks deterministic properties here; in CI it replays the same examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
TEST_SEED = int(os.environ.get("DENIABLE_TEST_SEED", DEFAULT_TEST_SEED))

_seed_key = pytest.StashKey[str]()

HEAVY = ("slow", "stat", "audit", "browser", "postgres", "integration", "build")
"""The markers of the tests the fast suite leaves out (declared in pyproject.toml)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--suite", choices=("fast", "rest", "full"), default=None,
        help="fast: all but the tests marked " + ", ".join(HEAVY) + " (the default without paths); "
             "rest: only those; full: every test (the default when paths are named)",
    )


def _suite(config: pytest.Config) -> str:
    chosen = config.getoption("--suite")
    if chosen:
        return str(chosen)
    explicit = config.args_source != pytest.Config.ArgsSource.TESTPATHS or config.option.markexpr
    return "full" if explicit else "fast"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # a test on a PostgreSQL database is a PostgreSQL test, however it asks for it
        if {"postgres_url", "postgres_admin"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
    suite = _suite(config)
    if suite == "full":
        return
    heavy = [any(item.get_closest_marker(name) for name in HEAVY) for item in items]
    keep = [item for item, h in zip(items, heavy, strict=True) if h == (suite == "rest")]
    dropped = [item for item, h in zip(items, heavy, strict=True) if h != (suite == "rest")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``-n N`` (pytest-xdist's default ``--dist load``): a test module that defines a module-scoped fixture
    (its source says ``scope="module"``) runs whole on one worker.

    Such a fixture (a browser answering a survey, a server with its database, the docs site's build)
    is set up once in each worker that runs a test of its module, and ``load`` deals a module's tests
    out to every worker, so each would set it up again. Here each such module is one unit of work,
    sent whole to one worker (the fixture is set up once, as without xdist); every other test is dealt
    out on its own, as ``load`` does. The units go out most tests first (xdist's ``loadscope`` order),
    single tests last, so the workers finish together. Another ``--dist`` mode (``loadfile``,
    ``worksteal``...) is left alone. (``--dist loadgroup`` would do this with marks, but it ignores them
    under pytest 9.2: pytest-dev/pytest-xdist#1386.)
    """
    if config.getoption("dist", "no") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    shared: dict[str, bool] = {}

    def has_module_fixture(path: str) -> bool:
        if path not in shared:
            source = config.rootpath / path
            shared[path] = source.suffix == ".py" and source.is_file() and \
                'scope="module"' in source.read_text(encoding="utf-8")
        return shared[path]

    class ModuleFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if has_module_fixture(path) else nodeid

    return ModuleFixtureScheduling(config, log)


def node_entropy(nodeid: str) -> int:
    """A stable 64-bit integer from a test id (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:8], "little")


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> Iterator[np.random.Generator]:
    """A Generator seeded from the test id and ``DENIABLE_TEST_SEED``."""
    entropy = node_entropy(request.node.nodeid)
    request.node.stash[_seed_key] = (
        f"rng = default_rng(SeedSequence([{entropy}, {TEST_SEED}])); "
        f"rerun with DENIABLE_TEST_SEED={TEST_SEED}"
    )
    yield np.random.default_rng(np.random.SeedSequence([entropy, TEST_SEED]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    report = yield
    seed = item.stash.get(_seed_key, None)
    if seed is not None and report.failed:
        report.sections.append(("deniable test seed", seed))
    return report


def pytest_report_header(config: pytest.Config) -> str:
    suite = _suite(config)
    hint = {"fast": "; --suite full runs every test", "rest": "", "full": ""}[suite]
    return f"deniable: DENIABLE_TEST_SEED={TEST_SEED}; {suite} suite{hint}"


@pytest.fixture
def restore_accelerator() -> Iterator[None]:
    """Put back the sampler backend chosen before the test, whatever the test sets."""
    from deniable import _accelerate as accelerate

    previous = accelerate.accelerator()
    yield
    accelerate.set_accelerator(previous)


@pytest.fixture(params=["numpy", "numba"])
def accelerator(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once with the numpy sampler and once with the numba one (skipped without numba).

    ``numba`` is forced for every batch, however small, so the compiled path is the one tested.
    """
    from deniable import _accelerate as accelerate

    if request.param == "numba" and not accelerate.numba_available():
        pytest.skip("numba is not installed (pip install 'deniable[fast]')")
    previous = accelerate.set_accelerator(request.param)
    yield request.param
    accelerate.set_accelerator(previous)
