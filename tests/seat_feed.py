"""A seat fed recorded logs: what a host sends it before its records, built from a log's header,
and a player that shows nothing. Shared by the seat's record-path tests and
``scripts/bench_seat_records.py``."""

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


class Quiet:
    """A bot's player: hears everything, shows nothing, chooses nothing here; keeps why its
    session finished."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def show(self, view: dict[str, Any]) -> None:
        pass

    def event(self, text: str) -> None:
        pass

    def choose(self, legal: list[str], view: dict[str, Any]) -> str:
        return legal[0]

    def finished(self, reason: str) -> None:
        self.reason = reason
