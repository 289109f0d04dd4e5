"""Running and loading the programs of ``scripts/`` from tests (they are not modules of the
package: run as a user would, or loaded from their file)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def run_script(
    name: str, *args: str, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python scripts/NAME ARGS`` with the checkout on ``PYTHONPATH``, its output captured."""
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / name), *args],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        check=check,
        timeout=timeout,
        capture_output=True,
        text=True,
    )


def load_script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (registered under NAME: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
