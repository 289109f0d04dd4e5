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
