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
# a browser, soaks), with their relative weight (the sum of their tests' durations, in seconds,
# from one measured run; only the order they give matters). ``-n 2 --dist worksteal`` first
# gives each worker one half of the collection, in order, then lets an idle worker take the
# tail of the other's queue. So the slow files are shared out between the two halves (the
# heaviest first, each to the lighter half) and put at the start of their half: both workers
# begin with long tests and end on short ones, and neither starts a long test while the other
# has nothing left to do. Only the order changes: the tests of a file keep theirs, and the
# other files keep theirs, after the slow ones of their half.
SLOW_FILES = {
    "test_table_protocol.py": 470,
    "test_e2e_table.py": 415,
    "test_web_browser.py": 185,
    "test_engine_properties.py": 105,
    "test_blind_table.py": 70,
    "test_game_log.py": 65,
    "test_replay_mayi.py": 55,
    "test_mayi_soak.py": 50,
    "test_eventlog.py": 50,
    "test_web_browser_i18n.py": 50,
    "test_engine_fast_paths.py": 45,
    "test_replay_audit.py": 45,
    "test_replay_blind.py": 45,
    "test_replay_i18n.py": 30,
    "test_replay_analysis.py": 25,
    "test_cli_errors.py": 25,
    "test_hostile_peers.py": 20,
}


def _two_halves_slow_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` reordered as described above (unchanged if a half would be all slow files)."""
    halves: tuple[list[str], list[str]] = ([], [])
    weights = [0, 0]
    for name, weight in sorted(SLOW_FILES.items(), key=lambda kv: -kv[1]):
        lighter = weights.index(min(weights))
        halves[lighter].append(name)
        weights[lighter] += weight
    groups: tuple[list[pytest.Item], list[pytest.Item]] = ([], [])
    for half, names in enumerate(halves):
        for name in names:
            groups[half].extend(item for item in items if item.path.name == name)
    others = [item for item in items if item.path.name not in SLOW_FILES]
    room = len(items) // 2 - len(groups[0])  # how many others fill the first half
    if room < 0 or len(groups[1]) > len(items) - len(items) // 2:
        return items
    return groups[0] + others[:room] + groups[1] + others[room:]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = _two_halves_slow_first(items)
