"""Extract, update and compile the message catalogue (``docs/i18n.md``).

    python scripts/update_catalogs.py            # extract -> update every .po -> compile .mo
    python scripts/update_catalogs.py --check    # exit 1 if a catalogue lags the code

Extraction reads ``babel.cfg`` (the Python packages and the page's script) for the keywords
``_``, ``N_``, ``gettext`` and ``ngettext``; the template is ``canasta_net/locale/canasta.pot``.
Updating keeps every translation, marks none fuzzy (a changed msgid is a new message, left
untranslated for a person to translate) and drops the obsolete ones. Compiling writes the ``.mo``
beside each ``.po``; both are committed, so an install needs no build step.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from babel.messages.frontend import CommandLineInterface

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "canasta_net" / "locale"
TEMPLATE = LOCALE / "canasta.pot"
DOMAIN = "canasta"
KEYWORDS = ["_", "N_", "gettext", "ngettext:1,2"]
TRANSLATED = ("ru", "bg", "pl")
STEADY_DATE = r'"\1: 2026-12-01 00:00+0000\\n"'


def pybabel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "-q", *args])


def extract() -> None:
    keywords = [arg for k in KEYWORDS for arg in ("-k", k)]
    pybabel(
        "extract", "-F", str(ROOT / "babel.cfg"), "--no-default-keywords", *keywords,
        "--no-location", "--sort-output", "--project", "canasta-net",
        "-o", str(TEMPLATE), str(ROOT),
    )  # fmt: skip


def update() -> None:
    for lang in TRANSLATED:
        po = LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
        verb = "update" if po.exists() else "init"
        extra = ["--no-fuzzy-matching", "--ignore-obsolete"] if verb == "update" else []
        pybabel(verb, "-i", str(TEMPLATE), "-d", str(LOCALE), "-D", DOMAIN, "-l", lang, *extra)


def steady_dates() -> None:
    """Fix the header's dates, so that two branches adding messages do not conflict on them."""
    for path in [TEMPLATE, *LOCALE.glob("*/LC_MESSAGES/*.po")]:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r'"(POT-Creation-Date|PO-Revision-Date): [^"]*\\n"', STEADY_DATE, text)
        path.write_text(text, encoding="utf-8")


def compile_all() -> None:
    pybabel("compile", "-d", str(LOCALE), "-D", DOMAIN, "--statistics")


def lagging() -> list[str]:
    """What the committed catalogues miss (see ``tests/test_i18n.py``, which checks the same)."""
    sys.path.insert(0, str(ROOT))
    from tests.catalog_check import catalogue_problems

    return catalogue_problems()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report what lags")
    args = parser.parse_args()
    if args.check:
        problems = lagging()
        for line in problems:
            print(line)
        return 1 if problems else 0
    extract()
    update()
    steady_dates()
    compile_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
