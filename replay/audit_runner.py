"""Audit many log files, in parallel worker processes when asked, reporting progress as each ends.

Auditing is CPU-bound (signature checks and the engine's replay), so ``--jobs N`` runs up to N
worker processes; the reports come back in the order the files were given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

from .audit import AuditReport, audit_path


def audit_paths(
    paths: Sequence[str],
    jobs: int = 1,
    on_done: Callable[[AuditReport], None] | None = None,
    exposure: str | None = None,
) -> list[AuditReport]:
    """Audit every file; ``on_done`` is called once per file as its audit finishes.
    ``exposure``: an exposure file to check against the only log (by default each log's own,
    ``<log>.exposure``, if there is one)."""
    if exposure is not None and len(paths) != 1:
        raise ValueError("an exposure file goes with exactly one log")
    if jobs <= 1 or len(paths) <= 1:
        reports = []
        for path in paths:
            report = audit_path(path, exposure)
            if on_done is not None:
                on_done(report)
            reports.append(report)
        return reports
    results: dict[int, AuditReport] = {}
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        futures: dict[Future[AuditReport], int] = {
            pool.submit(audit_path, path): n for n, path in enumerate(paths)
        }
        for future in as_completed(futures):
            report = future.result()
            results[futures[future]] = report
            if on_done is not None:
                on_done(report)
    return [results[n] for n in range(len(paths))]
