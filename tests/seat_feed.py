"""What a host sends a seat before its records, built from a log's header: shared by the seat's
record-path tests and ``scripts/bench_seat_records.py``, which feed recorded logs to a seat."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def welcome_for(header: Mapping[str, Any], seat: int, table_name: str) -> dict[str, Any]:
    """The ``welcome`` (docs/wire-protocol.md) of ``seat`` at the table whose log header is
    ``header``, with every seat taken and connected, before any record (``head`` zero)."""
    table = {
        "name": table_name,
        "game": "canasta",
        "variant": header["variant"],
        "rules": header["rules"],
        "table_id": header["table"],
        "deal": header["deal"],
        "seats": [
            {"seat": n, "name": s["name"], "bot": s["bot"], "connected": True, "taken": True}
            for n, s in enumerate(header["seats"])
        ],
    }
    head = bytes(32)
    return {"t": "welcome", "version": 2, "seat": seat, "table": table, "aseq": 0, "head": head}
