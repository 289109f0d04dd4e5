"""The player's page's screenshots for the docs (docs/img/web-table.png, web-score-sheet.png).

A real ``canasta play --ui web`` game against bots, played by clicks in the system Chromium
(Playwright): the table is taken at the person's turn with the most melds on it (both sides
having melded; until one with a canasta), a card selected and the Discard button lit; the score
sheet when the first hand ends. The deal is
random, so every run takes other pictures of the same page.

    PYTHONPATH=. python scripts/screenshots.py [--variant classic] [--out docs/img]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from web_driver import (  # noqa: E402
    PlayProcess,
    browser,
    legal_moves,
    play_a_move,
    playwright_missing,
    select_cards,
    version,
    wait_for_change,
    wait_for_turn,
)

SIZE = {"width": 1280, "height": 800}


def table_worth_showing(page: Any) -> bool:
    """Both sides have melds, and the person is to discard."""
    sides = page.locator("#sides .side")
    if sides.count() < 2 or any(sides.nth(i).locator(".meld").count() == 0 for i in range(2)):
        return False
    legal = legal_moves(page)
    return any(m.startswith("discard") for m in legal) and all(
        m.startswith(("discard", "meld", "add")) for m in legal
    )


def take(out: Path, variant: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    table_png, sheet_png = out / "web-table.png", out / "web-score-sheet.png"
    taken: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        # two hands, so that the first one's sheet is the one between hands (Next hand)
        play = PlayProcess(Path(tmp), "--variant", variant, "--hands", "2", "--delay", "0")
        try:
            with browser() as b:
                page = b.new_page(viewport=SIZE)
                page.goto(play.url)
                best, done_table = 0, False
                for _ in range(500):
                    kind = wait_for_turn(page)
                    if kind == "sheet":
                        page.wait_for_timeout(300)
                        page.screenshot(path=str(sheet_png))
                        taken.append(sheet_png)
                        break
                    # the richest table seen (most melds) until one with a canasta on it
                    melds = page.locator("#sides .meld").count()
                    if not done_table and melds > best and table_worth_showing(page):
                        best = melds
                        discard = next(m for m in legal_moves(page) if m.startswith("discard"))
                        select_cards(page, discard.split()[1:])
                        page.mouse.move(0, 0)
                        page.screenshot(path=str(table_png))
                        if table_png not in taken:
                            taken.append(table_png)
                        done_table = melds >= 5 and page.locator("#sides .badge").count() > 0
                    before = version(page)
                    play_a_move(page)
                    wait_for_change(page, before)
        finally:
            play.stop()
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    missing = playwright_missing()
    if missing:
        raise SystemExit(missing)
    for path in take(args.out, args.variant):
        print(path)


if __name__ == "__main__":
    main()
