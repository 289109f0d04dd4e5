"""The system Chromium for the tests that render a page (``apt-get install chromium``): found on
the PATH, started headless with no network of its own (Playwright's own browser download is not
used). One place for the flags, so every test starts it alike."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

MISSING = "Chromium is not installed (apt-get install chromium): the page is not rendered."


def chromium() -> str | None:
    """The system Chromium, if installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name) or (
            f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None
        )
        if found:
            return found
    return None


def dump_dom(url: str, profile: Path) -> subprocess.CompletedProcess[str]:
    """The page at ``url`` rendered headless (its scripts run), its DOM on stdout."""
    browser = chromium()
    assert browser is not None, MISSING
    return subprocess.run(
        [browser, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
