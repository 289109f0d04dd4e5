"""The whole suite reads English whatever the developer's locale (docs/i18n.md): the CLI takes
its language from LANGUAGE/LC_ALL/LC_MESSAGES/LANG, and its subprocesses inherit them. Tests of
other languages say so with ``--lang`` or an explicit environment.

Hypothesis runs without its per-example deadline: speed is measured by the benchmarks in
``scripts/``, never asserted by a test, and a deadline fails a property test on a busy machine
for no fault of the code."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from hypothesis import settings

os.environ["LANGUAGE"] = "en"

settings.register_profile("canasta", deadline=None)
settings.load_profile("canasta")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The processes a test starts (it appends them): killed at its end if still running."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# The files whose tests take the longest (whole matches across processes, blind deals, pages in
# a browser, soaks), slowest first: collected before the others, so that under ``-n 2 --dist
# worksteal`` they start first and the two workers end together on short tests, instead of one
# of them starting a long test while the other has nothing left to do. Only the order changes;
# a file not listed keeps its place after these, and the tests of a file keep theirs.
SLOW_FIRST = (
    "test_e2e_table.py",
    "test_table_protocol.py",
    "test_web_browser.py",
    "test_mayi_soak.py",
    "test_engine_properties.py",
    "test_web_browser_i18n.py",
    "test_replay_blind.py",
    "test_replay_mayi.py",
    "test_game_log.py",
    "test_replay_audit.py",
    "test_engine_fast_paths.py",
    "test_blind_table.py",
    "test_cli_errors.py",
    "test_hostile_peers.py",
    "test_replay_analysis.py",
    "test_eventlog.py",
    "test_schema.py",
    "test_watch.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))
