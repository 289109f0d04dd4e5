"""What the committed message catalogues lack (``docs/i18n.md``): used by ``tests/test_i18n.py``
and ``scripts/update_catalogs.py --check``.

Every message the code marks (extracted with Babel, as the script does) must be in each
language's ``.po``, translated, not fuzzy, with the same ``{placeholders}`` as its msgid, and the
committed ``.mo`` beside it must hold exactly the ``.po``'s translations.
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "canasta_net" / "locale"
TRANSLATED = ("ru", "bg", "pl")
KEYWORDS: dict[str, tuple[int, ...] | None] = {
    "_": None,
    "N_": None,
    "gettext": None,
    "ngettext": (1, 2),
}
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def extracted() -> set[str | tuple[str, ...]]:
    """The msgids the code marks now (a plural message as its (singular, plural) pair)."""
    with open(ROOT / "babel.cfg", encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found: set[str | tuple[str, ...]] = set()
    for _filename, _lineno, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=KEYWORDS
    ):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def read_catalogue(lang: str) -> Catalog:
    with open(LOCALE / lang / "LC_MESSAGES" / "canasta.po", "rb") as f:
        return read_po(f, locale=lang)


def catalogue_problems(langs: tuple[str, ...] = TRANSLATED) -> list[str]:
    problems: list[str] = []
    wanted = extracted()
    for lang in langs:
        catalog = read_catalogue(lang)
        ids = {m.id if isinstance(m.id, str) else tuple(m.id) for m in catalog if m.id}
        for msgid in sorted(wanted - ids, key=str):
            problems.append(f"{lang}: not in the catalogue: {msgid!r}")
        for message in catalog:
            if not message.id:
                continue
            problems.extend(f"{lang}: {p}" for p in _message_problems(message))
        problems.extend(f"{lang}: {p}" for p in _mo_problems(lang, catalog))
    return problems


def _message_problems(message: object) -> list[str]:
    from babel.messages.catalog import Message

    assert isinstance(message, Message)
    out = []
    assert message.string is not None, message.id
    ids = [message.id] if isinstance(message.id, str) else list(message.id)
    strs = [message.string] if isinstance(message.string, str) else list(message.string)
    if message.fuzzy:
        out.append(f"fuzzy: {ids[0]!r}")
    if not all(strs):
        out.append(f"untranslated: {ids[0]!r}")
    wanted = set().union(*(placeholders(i) for i in ids))
    for text in strs:
        have = placeholders(text)
        # a plural form may say its number in words ("одна карта") and leave {n} out
        if text and have != wanted and not (len(ids) > 1 and have == wanted - {"n"}):
            out.append(f"placeholders differ: {ids[0]!r} -> {text!r}")
    return out


def _mo_problems(lang: str, catalog: Catalog) -> list[str]:
    mo = LOCALE / lang / "LC_MESSAGES" / "canasta.mo"
    if not mo.exists():
        return ["no compiled .mo (run scripts/update_catalogs.py)"]
    with open(mo, "rb") as f:
        compiled: dict[object, str] = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
    expected: dict[object, str] = {}
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        if isinstance(message.id, str):
            if message.string:
                expected[message.id] = str(message.string)
        else:
            assert message.string is not None and not isinstance(message.string, str)
            for i, text in enumerate(message.string):
                if text:
                    expected[(message.id[0], i)] = text
    actual = {k: v for k, v in compiled.items() if k != ""}
    if actual != expected:
        return ["the .mo is not compiled from the .po (run scripts/update_catalogs.py)"]
    return []
