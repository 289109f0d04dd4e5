"""A page server for the browser tests, serving a scripted question on a real table.

A real four-seat Classic table is played in memory (the harness of ``test_table_protocol``),
the person's seat (1, "ada") feeding a real ``TableModel``, until its partner (seat 3) is to
move after drawing; then the model is asked the partner's "may I go out?" (``answer yes`` /
``answer no``), which no bot asks on cue. The real ``PageServer`` serves that model on
127.0.0.1; what the page posts is printed (``ACT answer yes``) and acted on as a seat would.

A second server serves the same table as a watcher's model (no seat, no hand, the public view).
A third serves a joiner's lobby: a table heard on the LAN to pick, then its fingerprint to accept
(``PICK 0``, ``TRUST True`` printed).

Run by ``tests/test_web_browser.py``; prints the three pages' links, each on a line of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_table_model import seat_with_model
from test_table_protocol import Harness, Remote, classic, config
from twisted.internet import reactor

from canasta_net.ui.table_model import TableModel
from canasta_net.web.server import PageServer

PARTNER = 3
ANSWERS = ["answer yes", "answer no"]


class PrintedActions:
    """What the page posts: printed for the test, and the model told as a seat's client would."""

    def __init__(self, model: TableModel) -> None:
        self.model = model

    def act(self, text: str) -> str | None:
        print("ACT", text, flush=True)
        if text not in self.model.legal:
            self.model.refused("not-legal", f"{text!r} is not a move you can make now", text)
            return None
        self.model.acted(text)
        return None

    def ready(self) -> str | None:
        print("READY", flush=True)
        return None

    def chat(self, text: str) -> str | None:
        print("CHAT", text, flush=True)
        return None

    def suggest(self) -> str:
        return "no suggestion on this scripted table"

    def quit(self) -> str | None:
        print("QUIT", flush=True)
        reactor.callLater(0.1, reactor.stop)
        return None


class PrintedLobby:
    """A joiner's lobby: a table picked, then its fingerprint asked about; printed for the test."""

    def __init__(self, model: TableModel) -> None:
        self.model = model

    def trust(self, accept: bool) -> str | None:
        print("TRUST", accept, flush=True)
        self.model.set_lobby(None)
        return None

    def pick(self, index: int, address: str | None = None) -> str | None:
        print("PICK", index, flush=True)
        table = LAN_TABLE
        question = {"address": table["address"], "fingerprint": table["fingerprint"]}
        self.model.set_lobby({"trust": dict(question, table=table["name"])})
        return None


LAN_TABLE = {
    "name": "kitchen",
    "variant": "classic",
    "seats": 4,
    "free": 2,
    "deal": "commit-reveal",
    "address": "192.0.2.7:47475",
    "fingerprint": "abcd-efgh-ijkm-npqr-stuv-wxyz-2345-6789",
}


def partners_turn(model: TableModel) -> Any:
    def stop(_peer: Remote, _message: dict[str, Any]) -> bool:
        state = model.view.get("state") or {}
        return state.get("turn") == PARTNER and state.get("phase") == "play"

    return stop


def scripted_models() -> tuple[TableModel, TableModel]:
    """The person's model, asked the partner's question, and a watcher's of the same table."""
    h = Harness(config(classic(target=5000), players=2))
    _peer, model, _player = seat_with_model(h, "ada")
    assert h.run(partners_turn(model)) is not None, "the partner never got to move"
    watcher = TableModel(role="spectator")
    assert model.game is not None
    watcher.welcome(model.game, None, model.names)
    watcher.seat_summary(model.seats, ["ada's friend"])
    state = dict(model.view.get("state") or {})
    state.pop("hand", None)  # what a watcher is sent holds no seat's cards
    state["seat"] = None
    watcher.show(dict(model.view, state=state))
    for line in model.events:
        watcher.event(line)
    model.prompt(ANSWERS, model.view)
    return model, watcher


def main() -> None:
    """Serve the pages; print the person's link, the watcher's, then the joiner's lobby's."""
    for model in scripted_models():
        server = PageServer(model, PrintedActions(model), reactor=reactor)
        server.listen()
        print(server.url, flush=True)
    lobby = TableModel()
    lobby.set_lobby({"tables": [LAN_TABLE]})
    server = PageServer(lobby, PrintedActions(lobby), reactor=reactor)
    server.lobby = PrintedLobby(lobby)
    server.listen()
    print(server.url, flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
