"""The whole suite reads English whatever the developer's locale (docs/i18n.md): the CLI takes
its language from LANGUAGE/LC_ALL/LC_MESSAGES/LANG, and its subprocesses inherit them. Tests of
other languages say so with ``--lang`` or an explicit environment.

Hypothesis runs without its per-example deadline: speed is measured by the benchmarks in
``scripts/``, never asserted by a test, and a deadline fails a property test on a busy machine
for no fault of the code.

The suite starts about a hundred Python processes (``canasta``, ``canasta-replay``, the page's
host) besides its two workers. Where bytecode is not written (``PYTHONDONTWRITEBYTECODE``, as some
CI and sandboxes set), each of them would compile the whole package from source again, about half
a second of CPU each, and each worker the package and the test modules, about 11 s of CPU before
its first test (collecting takes 15.5 s of CPU, 4.3 s with the bytecode kept): their bytecode is
kept instead (``PYTHONPYCACHEPREFIX``) in pytest's cache directory (``.pytest_cache``, kept from
run to run, emptied by ``--cache-clear``), so nothing is written beside the sources. A prefix
makes Python read no ``__pycache__``, so the first run there also compiles the standard library
and the dependencies once (about 4.5 s of CPU more per worker); without pytest's cache
(``-p no:cacheprovider``) the directory is one of this run, removed at its end, and used by the
processes the tests start only.

A test process plays the host, the seats and the auditor at once, and each checks the same
signatures, proofs and deal replays on the same bytes: the suite switches on the memo of those
pure checks (``canasta_net.memo``: keyed by every input byte, only what passed is remembered, so
a tampered input is always checked in full), emptied before and after each test that patches
anything (``monkeypatch``), so that no result kept outside a patch stands in for a call under
it; and in the processes the tests start (hosts, seats, audits), each of which checks the same
bytes more than once too."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

from canasta_net import memo

os.environ["LANGUAGE"] = "en"

settings.register_profile("canasta", deadline=None)
settings.load_profile("canasta")

memo.enable()
os.environ[memo.ENVIRONMENT] = "1"  # and in the processes the tests start

# The run's bytecode directory, made by the process that starts the workers (pytest-xdist's
# controller) and named to them in this variable.
_PYCACHE = "CANASTA_TEST_PYCACHE"


def pytest_configure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")
    if (
        not worker
        and os.environ.get("PYTHONDONTWRITEBYTECODE")
        and not os.environ.get("PYTHONPYCACHEPREFIX")
        and _PYCACHE not in os.environ
    ):
        cache = getattr(config, "cache", None)
        if cache is not None:
            # kept from run to run: for the workers (started after this hook) and all they start
            os.environ.pop("PYTHONDONTWRITEBYTECODE")
            os.environ["PYTHONPYCACHEPREFIX"] = str(cache.mkdir("canasta-pycache"))
            return
        os.environ[_PYCACHE] = tempfile.mkdtemp(prefix="canasta-test-pycache-")
        config.add_cleanup(lambda: shutil.rmtree(os.environ.pop(_PYCACHE), ignore_errors=True))
    # without pytest's cache, the processes the tests start only (not the workers: their stdlib
    # and dependencies have bytecode where installed, which a new prefix would compile again)
    distributing = not worker and bool(getattr(config.option, "numprocesses", None))
    if _PYCACHE in os.environ and not distributing:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = os.environ[_PYCACHE]


# The modules whose tests take seconds each (processes on a real network, the browser, random
# soaks), longest first, run before all the others: pytest-xdist's workers then end the run on the
# many short tests, which they share out as they go (--dist worksteal), instead of one worker
# starting a long test when the other has nothing left to do. Each module's tests stay together
# and in their order (module fixtures are made once). test_table_protocol (90 tests of at most a
# few seconds) keeps its place near the end: a worker's process keeps about 800,000 objects alive
# after it (lists and dicts of its tables' logs), which made every module run after it about 10%
# slower (the garbage collector's full passes).
LONG_FIRST = (
    "test_e2e_table",
    "test_web_browser",
    "test_web_browser_i18n",
    "test_hostile_peers",
    "test_engine_properties",
    "test_mayi_soak",
    "test_web_browser_layout",
    "test_engine_fast_paths",
    "test_web_lobby",
    "test_cli_errors",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: the rest as found


@pytest.fixture(autouse=True)
def _fresh_memo(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that patches anything starts and ends with an empty memo, so that no result kept
    before the patch stands in for a call the patch changes (the others share the memo: the
    parameters of one test often check the same log)."""
    patches = "monkeypatch" in request.fixturenames
    if patches:
        memo.clear()
    yield
    if patches:
        memo.clear()


@pytest.fixture(scope="session")
def _chromium() -> Iterator[Any]:
    """One headless Chromium per test process, started when a test first asks for it: a start
    costs seconds, and the browser tests are spread over several modules and both workers."""
    from web_driver import browser

    with browser() as b:
        yield b


@pytest.fixture
def chromium_browser(_chromium: Any) -> Iterator[Any]:
    """The process's Chromium; the pages a test opens in it (each in a context of its own) are
    closed at the test's end, so that no page of a finished test runs on beside the next."""
    before = set(_chromium.contexts)
    yield _chromium
    for context in _chromium.contexts:
        if context not in before:
            context.close()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The processes a test starts (it appends them): killed at its end if still running."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
