"""Finding English sentences in what a client showed a reader of another language (the terminal
client's output, the page's visible text): used by the whole-hand tests of ``test_i18n_clients``
and ``test_web_browser_i18n``.

Two detectors, both language-blind about the reader (Polish shares the ASCII alphabet, so "an
ASCII word" is not "an English word"):

- **the catalogue, verbatim**: each English msgid of ``canasta.pot`` cut at its placeholders,
  line breaks and column gaps; a piece of three or more words of its own found in the text is an
  untranslated message;
- **runs of English words**: three or more words in a row (on one line, nothing but spaces and
  punctuation between them) that are English words -- words of the catalogue's msgids or of
  :data:`COMMON` -- and no word of a translation (a Polish ``to``, ``na``; the canonical verbs
  and commands the translations keep, ``draw``, ``'hint'``). That catches a sentence that never
  went through the catalogue, which the first cannot.

And the engines' English meld names (``set of Ks``, ``4-7 of H``, ``5-9H run``), by their form.

What may stay as it is is taken out first: people's names (given by the test), card codes
(``KH``, ``10S``, ``JK``), reason codes and canonical moves (``take-discard``, ``max-hands``: a
hyphenated word is never English prose here), paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "canasta_net" / "locale"
TRANSLATED = ("ru", "bg", "pl")

# Frequent English words that a sentence written outside the catalogue could use.
COMMON = frozenset(
    """a an the of to in on at by for from with without into onto about as and or but not no is
    are was were be been being has have had do does did will would can could may might must
    shall should it its this that these those there here what which who whom whose when
    where why how all any each every some one two three i you your yours he she we they them
    their his her our us me my out up down over under again then than so too very just only
    also see try type press enter choose read cannot can't don't isn't won't please now yet
    still card cards game hand turn move moves seat seats player players table meld melds
    stock pile discard deal contract set sets run runs sequence sequences score points total
    win won wins lost left right next last first new old more less most least yes""".split()  # noqa: SIM905
)

# The words a translation keeps as they are: the moves' verbs, the commands, the short answers.
KEPT = frozenset(
    "draw meld add discard pass allow deny answer yes no hint help view say quit y n".split()  # noqa: SIM905
)

# A run of at least this many English words is a sentence.
RUN = 3
# A word; a rank's plural (``Ks``, ``10s``: "set of Ks") is an English word too.
WORD = re.compile(r"(?:10|[2-9AJQK])s\b|[^\W\d_][\w'’-]*", re.UNICODE)
RANK_PLURAL = re.compile(r"(?:10|[2-9AJQK])s")
ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
CARD_CODE = re.compile(r"(?<![\w-])(?:10|[2-9TJQKA])[CDHS](?![\w-])|(?<![\w-])JK(?![\w-])")
# The engines' English names of melds (the views' ``label``), too short for a run of words:
# ``set of Ks``, ``4-7 of H`` (May I?), ``5-9H run``.
ENGINE_LABELS = re.compile(
    r"\bset of (?:10|[2-9AJQK])s\b|\b(?:10|[2-9AJQK])-(?:10|[2-9AJQK]) of [CDHS]\b"
    r"|\b(?:10|[2-9AJQK])-(?:10|[2-9AJQK])[CDHS] run\b"
)
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
# What a line may hold that is not prose: a path, a URL, a token (hex, base64-ish).
NOT_PROSE = re.compile(r"\S*[/\\]\S*|\S+\.\S+|\b[0-9a-f]{8,}\b")


@cache
def _template() -> list[str]:
    """Every English msgid (singular and plural forms) of the template."""
    with open(LOCALE / "canasta.pot", "rb") as f:
        catalog = read_po(f)
    texts: list[str] = []
    for message in catalog:
        if not message.id:
            continue
        ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
        texts.extend(str(i) for i in ids)
    return texts


@cache
def translation_words() -> frozenset[str]:
    """The ASCII words the translations use (Polish words, and what every translation keeps:
    the canonical verbs, commands, card letters), lower-cased: never counted as English."""
    words: set[str] = set()
    for lang in TRANSLATED:
        with open(LOCALE / lang / "LC_MESSAGES" / "canasta.po", "rb") as f:
            catalog = read_po(f, locale=lang)
        for message in catalog:
            strings = (message.string,) if isinstance(message.string, str) else message.string
            assert strings is not None, message.id
            for text in strings:
                # whole words only (not the ASCII pieces of "ręce"), and not an option's or a
                # move's name a translation quotes (--hands, 'take-pile')
                text = re.sub(r"--[\w-]+|'[^']*'", " ", PLACEHOLDER.sub(" ", text))
                words.update(w.lower() for w in WORD.findall(text) if w.isascii() and "-" not in w)
    return frozenset(words | KEPT)


@cache
def english_vocabulary() -> frozenset[str]:
    """The words of the English catalogue and :data:`COMMON`, less the translations' words."""
    words = {
        w.lower() for text in _template() for w in ASCII_WORD.findall(PLACEHOLDER.sub(" ", text))
    }
    return frozenset((words | COMMON) - translation_words())


def _pieces(msgid: str) -> list[str]:
    """A msgid cut at its placeholders, line breaks and column gaps: the pieces a client shows
    verbatim."""
    pieces = []
    for piece in re.split(r"\{[^{}]*\}|\n|\s{2,}", msgid):
        piece = piece.strip(" .,:;!?()'\"")
        words = ASCII_WORD.findall(piece)
        if len(words) >= RUN and sum(w.lower() in english_vocabulary() for w in words) >= RUN:
            pieces.append(piece)
    return pieces


@cache
def catalogue_pieces() -> tuple[str, ...]:
    return tuple(sorted({p for text in _template() for p in _pieces(text)}, key=len, reverse=True))


def _bare(line: str, names: Iterable[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        if name:
            line = line.replace(name, " ")
    line = NOT_PROSE.sub(" ", line)
    return CARD_CODE.sub(" ", line)


def english_runs(line: str) -> list[str]:
    """The runs of :data:`RUN` or more English words in a row in ``line``."""
    runs: list[str] = []
    current: list[str] = []
    last_end = 0
    english = english_vocabulary()

    def close() -> None:
        if len(current) >= RUN:
            runs.append(" ".join(current))
        current.clear()

    for match in WORD.finditer(line):
        word = match.group(0).strip("'’")
        between = line[last_end : match.start()]
        last_end = match.end()
        if any(c.isalnum() for c in between):
            close()  # a number or a card between: not one run
        if RANK_PLURAL.fullmatch(word):
            current.append(word)
            continue
        if "-" in word or not word.isascii() or word.lower() not in english:
            close()
            continue
        current.append(word)
    close()
    return runs


def english_sentences(text: str, names: Iterable[str] = ()) -> list[str]:
    """Every English sentence found in ``text`` (one entry per line where one is found, saying
    what was found): empty when the text is wholly in another language."""
    names = tuple(names)
    found = []
    pieces = catalogue_pieces()
    for line in text.splitlines():
        bare = _bare(line, names)
        hits = ENGINE_LABELS.findall(line) + [p for p in pieces if p in bare]
        hits += english_runs(bare)
        if hits:
            found.append(f"{hits[0]!r} in {line.strip()!r}")
    return found


# ---------------------------------------------------------------------- single words
# A stricter check for a text that has no English word at all (the replay tool's pages):
# Common English words of the clients' sentences: none may be in a Russian, Bulgarian or Polish
# client's output, apart from card notation, names, reason codes and the canonical move verbs.
COMMON_ENGLISH = {
    "the",
    "your",
    "you",
    "and",
    "with",
    "from",
    "turn",
    "hand",
    "pile",
    "stock",
    "cards",
    "card",
    "meld",
    "melds",
    "discard",
    "draw",
    "drew",
    "took",
    "team",
    "seat",
    "score",
    "scores",
    "total",
    "target",
    "press",
    "enter",
    "next",
    "over",
    "went",
    "out",
    "frozen",
    "legal",
    "move",
    "last",
    "red",
    "threes",
    "canasta",
    "canastas",
    "bonuses",
    "left",
    "going",
    "match",
    "stopped",
    "won",
    "asks",
    "may",
    "yes",
    "not",
    "new",
    "laid",
    "needs",
    "open",
    "melding",
    "added",
    "dealer",
    "in",
    "of",
    "is",
    "or",
    "for",
    "it",
    "type",
    "number",
    "play",
    "just",
    "drawn",
}  # not "a", "to", "bot": Polish words too
# What may stay as it is: the move verbs and codes, names, cards, "hint"/"help" commands
ALLOWED_WORDS = {"draw", "meld", "discard", "take-pile", "add", "ask-go-out", "answer", "yes", "no"}


def english_words(text: str, names: Iterable[str] = ()) -> list[str]:
    """The common English words of ``text`` (:data:`COMMON_ENGLISH`), line by line, the
    people's ``names`` and the cards in a reader's notation taken out first."""
    found = []
    for line in text.splitlines():
        bare = line
        for name in names:
            bare = bare.replace(name, "")
        bare = re.sub(r"(10|[2-9A-Z])[♠♣♥♦]", "", bare)  # cards in the reader's notation
        for word in re.findall(r"[A-Za-z][A-Za-z'-]*", bare):
            low = word.lower()
            if low in COMMON_ENGLISH and low not in ALLOWED_WORDS:
                found.append(f"{word!r} in {line!r}")
    return found


__all__ = [
    "catalogue_pieces",
    "english_runs",
    "english_sentences",
    "english_vocabulary",
    "english_words",
]
