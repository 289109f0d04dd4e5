"""Annotations of a game, kept beside its log in a sidecar file bound to it by hashes.

As in PGN, an annotation hangs off one move (here: one record) and may carry a comment, a glyph
with its numeric annotation glyph (NAG), highlighted cards and a variation, the what-if line (an
alternative sequence of actions from the position after the record, checked by the engine when it
is added; see ``whatif.py``). Several annotators may annotate the same game: each annotation names
its author.

The sidecar (``GAME.cnlog.annotations.json``, format ``canasta-replay/annotations/1``, documented in
``docs/replay.md``) names the hash of the log's header record, and each annotation the hash of its
record, so that annotations can never silently move to another game or another record: loading them
against a log whose hashes differ is refused. An annotation names its record by number and hash,
never by hand or turn, so the way hands and turns are numbered for people does not touch the
binding; only the sentence stored with a what-if line names a turn (see ``SUMMARY_COUNTS_FROM``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from canasta_net.cards import CardParseError, face_text, parse_faces
from canasta_net.log.records import shown_number

from .errors import AnnotationError, AnnotationMismatch
from .timeline import Timeline

ANNOTATIONS_FORMAT: Final = "canasta-replay/annotations/1"
SIDECAR_SUFFIX: Final = ".annotations.json"
MAX_FILE_SIZE: Final = 16 << 20
MAX_COMMENT: Final = 10_000
MAX_AUTHOR: Final = 100
MAX_CARDS: Final = 40
MAX_LINE: Final = 200
#: How a what-if outcome's ``summary`` counts turns: from 1, as people do. Files written before
#: every tool counted from 1 have no ``counts_from``: their summaries count from 0 and are
#: renumbered when read (``_renumbered_outcome``).
SUMMARY_COUNTS_FROM: Final = 1

#: PGN's glyphs and their numeric annotation glyphs (NAG 1-6).
GLYPHS: Final = {"!": 1, "?": 2, "!!": 3, "??": 4, "!?": 5, "?!": 6}
GLYPH_MEANINGS: Final = {
    "!": "good move",
    "?": "mistake",
    "!!": "brilliant move",
    "??": "blunder",
    "!?": "interesting move",
    "?!": "dubious move",
}


@dataclass(frozen=True)
class WhatIfLine:
    """An alternative line of play and what the engine says it leads to."""

    actions: tuple[str, ...]
    outcome: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"actions": list(self.actions), "outcome": self.outcome}


@dataclass(frozen=True)
class Annotation:
    id: str
    record: int
    record_hash: bytes
    author: str
    created: str
    comment: str = ""
    glyph: str | None = None
    cards: tuple[str, ...] = ()
    line: WhatIfLine | None = None
    evaluation: dict[str, Any] | None = None  # the computer analysis's numbers (``eval``)

    @property
    def nag(self) -> int | None:
        return None if self.glyph is None else GLYPHS[self.glyph]

    def to_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "record": self.record,
            "record_hash": self.record_hash.hex(),
            "author": self.author,
            "created": self.created,
            "comment": self.comment,
            "glyph": self.glyph,
            "nag": self.nag,
            "cards": list(self.cards),
            "line": None if self.line is None else self.line.to_dict(),
        }
        if (
            self.evaluation is not None
        ):  # only the analysis writes one: other files stay as they were
            data["eval"] = self.evaluation
        return data


@dataclass
class AnnotationSet:
    """Every annotation of one game, bound to its log's header hash."""

    header_hash: bytes
    table: bytes
    annotations: list[Annotation] = field(default_factory=list)

    @classmethod
    def for_timeline(cls, timeline: Timeline) -> AnnotationSet:
        return cls(timeline.header_hash, timeline.header.table)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": ANNOTATIONS_FORMAT,
            "log": {"header_hash": self.header_hash.hex(), "table": self.table.hex()},
            "annotations": [a.to_dict() for a in self.annotations],
        }

    def at(self, record: int) -> list[Annotation]:
        return [a for a in self.annotations if a.record == record]

    def add(self, annotation: Annotation) -> None:
        if any(a.id == annotation.id for a in self.annotations):
            raise AnnotationError(f"An identical annotation ({annotation.id}) already exists.")
        self.annotations.append(annotation)
        self.annotations.sort(key=lambda a: a.record)  # stable: a record's notes keep their order

    def remove(self, wanted: str) -> Annotation:
        """Remove the annotation whose id is ``wanted`` (or begins with it, if only one does)."""
        wanted = wanted.strip().lower()
        matches = [a for a in self.annotations if a.id == wanted] or [
            a for a in self.annotations if wanted and a.id.startswith(wanted)
        ]
        if not matches:
            raise AnnotationError(f"There is no annotation {wanted!r}.")
        if len(matches) > 1:
            raise AnnotationError(
                f"{wanted!r} names {len(matches)} annotations; give more of the id."
            )
        self.annotations.remove(matches[0])
        return matches[0]

    def check_binding(self, timeline: Timeline, where: str) -> None:
        """Refuse annotations that belong to another game or to other records of this one."""
        if self.header_hash != timeline.header_hash:
            raise AnnotationMismatch(
                f"The annotations in {where} belong to another game: they are bound to the log "
                f"whose header hash is {self.header_hash.hex()[:16]}…, and this log's header hash "
                f"is {timeline.header_hash.hex()[:16]}…. Refusing to use them."
            )
        for annotation in self.annotations:
            if annotation.record > timeline.last_record:
                raise AnnotationMismatch(
                    f"Annotation {annotation.id} in {where} is bound to record "
                    f"{annotation.record}, which this log does not hold (its checked records end "
                    f"at {timeline.last_record}). Refusing to use the annotations."
                )
            actual = timeline.steps[annotation.record].hash
            if actual != annotation.record_hash:
                raise AnnotationMismatch(
                    f"Annotation {annotation.id} in {where} is bound to record "
                    f"{annotation.record} with hash {annotation.record_hash.hex()[:16]}…, but "
                    f"record {annotation.record} of this log has hash {actual.hex()[:16]}…. "
                    "Refusing to use the annotations."
                )


def sidecar_path(log_path: str | os.PathLike[str]) -> Path:
    return Path(os.fspath(log_path) + SIDECAR_SUFFIX)


def parse_glyph(text: str) -> str:
    """``!?`` or its NAG ``$5`` (or ``5``) to the glyph; raise AnnotationError otherwise."""
    value = text.strip()
    if value in GLYPHS:
        return value
    number = value.removeprefix("$")
    for glyph, nag in GLYPHS.items():
        if number == str(nag):
            return glyph
    raise AnnotationError(
        f"{text!r} is not a glyph: use one of {', '.join(GLYPHS)} (or their NAGs $1 to $6)."
    )


def parse_cards(text: str) -> tuple[str, ...]:
    try:
        faces = parse_faces(text)
    except CardParseError as e:
        raise AnnotationError(f"The highlighted cards cannot be read: {e}.") from None
    if len(faces) > MAX_CARDS:
        raise AnnotationError(f"Highlight at most {MAX_CARDS} cards.")
    return tuple(face_text(f) for f in faces)


def make_annotation(
    timeline: Timeline,
    record: int,
    *,
    author: str,
    created: str,
    comment: str = "",
    glyph: str | None = None,
    cards: Iterable[str] = (),
    line: WhatIfLine | None = None,
    evaluation: Mapping[str, Any] | None = None,
) -> Annotation:
    """A new annotation of ``record``, bound to that record's hash (``evaluation``: the computer
    analysis's numbers, see ``EVAL_FIELDS``)."""
    cards = tuple(cards)
    if not (comment.strip() or glyph or cards or line):
        raise AnnotationError("An annotation needs a comment, a glyph, cards or a what-if line.")
    _check_text(author, "author", MAX_AUTHOR)
    _check_text(comment, "comment", MAX_COMMENT)
    if not author.strip():
        raise AnnotationError("An annotation needs an author's name.")
    record_hash = timeline.steps[record].hash
    identity = json.dumps(
        [
            record_hash.hex(),
            author,
            created,
            comment,
            glyph,
            list(cards),
            None if line is None else list(line.actions),
        ],
        ensure_ascii=True,
    )
    annotation_id = hashlib.sha256(identity.encode()).hexdigest()[:10]
    checked = None if evaluation is None else _evaluation(dict(evaluation), "the evaluation", None)
    return Annotation(
        annotation_id,
        record,
        record_hash,
        author.strip(),
        created,
        comment,
        glyph,
        cards,
        line,
        checked,
    )


def describe_outcome(outcome: Mapping[str, Any]) -> str:
    return str(outcome.get("summary", ""))


# --------------------------------------------------------------------------- the file


def load_annotations(path: Path, timeline: Timeline, *, must_exist: bool = False) -> AnnotationSet:
    """The annotations in ``path`` for ``timeline`` (an empty set if there is no such file)."""
    try:
        with open(path, "rb") as sidecar:
            data = sidecar.read(MAX_FILE_SIZE + 1)
    except FileNotFoundError:
        if must_exist:
            raise AnnotationError(f"There is no annotation file {path}.") from None
        return AnnotationSet.for_timeline(timeline)
    except OSError as e:
        raise AnnotationError(f"The annotation file {path} cannot be read: {e.strerror}.") from None
    if len(data) > MAX_FILE_SIZE:
        raise AnnotationError(f"The annotation file {path} is over {MAX_FILE_SIZE} bytes.")
    try:
        decoded = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise AnnotationError(f"The annotation file {path} is not valid JSON: {e}.") from None
    annotations = annotation_set_from_dict(decoded, str(path))
    annotations.check_binding(timeline, str(path))
    return annotations


def save_annotations(path: Path, annotations: AnnotationSet) -> None:
    """Write the file whole, then move it into place, so a crash never leaves half a file."""
    text = json.dumps(annotations.to_dict(), indent=2, ensure_ascii=False) + "\n"
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def annotation_set_from_dict(data: Any, where: str) -> AnnotationSet:
    """Read the sidecar's JSON, checking every field (the file is input, never trusted)."""
    bad = _Bad(where)
    if not isinstance(data, dict):
        raise bad("it is not a JSON object")
    if data.get("format") != ANNOTATIONS_FORMAT:
        raise bad(f"its format is {data.get('format')!r}, not {ANNOTATIONS_FORMAT!r}")
    log = data.get("log")
    if not isinstance(log, dict):
        raise bad("it has no 'log' object")
    header_hash = _hex(log.get("header_hash"), 32, "log.header_hash", bad)
    table = _hex(log.get("table"), 16, "log.table", bad)
    items = data.get("annotations")
    if not isinstance(items, list):
        raise bad("'annotations' is not a list")
    result = AnnotationSet(header_hash, table)
    seen: set[str] = set()
    for number, item in enumerate(items):
        annotation = _annotation_from_dict(item, f"annotation {number}", bad)
        if annotation.id in seen:
            raise bad(f"two annotations have the id {annotation.id}")
        seen.add(annotation.id)
        result.annotations.append(annotation)
    return result


class _Bad:
    def __init__(self, where: str) -> None:
        self.where = where

    def __call__(self, what: str) -> AnnotationError:
        return AnnotationError(f"The annotation file {self.where} is malformed: {what}.")


def _hex(value: Any, size: int, name: str, bad: _Bad) -> bytes:
    try:
        data = bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        data = b""
    if len(data) != size:
        raise bad(f"{name} must be {size} bytes in hexadecimal")
    return data


def _text(item: Mapping[str, Any], key: str, where: str, bad: _Bad, limit: int) -> str:
    value = item.get(key, "")
    if not isinstance(value, str) or len(value) > limit:
        raise bad(f"{where}: {key!r} must be text of at most {limit} characters")
    return value


def _annotation_from_dict(item: Any, where: str, bad: _Bad) -> Annotation:
    if not isinstance(item, dict):
        raise bad(f"{where} is not an object")
    annotation_id = _text(item, "id", where, bad, 64)
    if not annotation_id:
        raise bad(f"{where} has no id")
    record = item.get("record")
    if not isinstance(record, int) or isinstance(record, bool) or record < 0:
        raise bad(f"{where}: 'record' must be a record number")
    glyph = item.get("glyph")
    if glyph is not None and glyph not in GLYPHS:
        raise bad(f"{where}: {glyph!r} is not a glyph")
    if glyph is not None and item.get("nag") not in (None, GLYPHS[glyph]):
        raise bad(f"{where}: the NAG {item.get('nag')!r} does not match the glyph {glyph}")
    cards = item.get("cards", [])
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise bad(f"{where}: 'cards' must be a list of cards")
    try:
        card_texts = parse_cards(" ".join(cards))
    except AnnotationError as e:
        raise bad(f"{where}: {e}") from None
    line = item.get("line")
    what_if = None
    if line is not None:
        if not isinstance(line, dict):
            raise bad(f"{where}: 'line' must be an object")
        actions = line.get("actions")
        outcome = line.get("outcome")
        if (
            not isinstance(actions, list)
            or not actions
            or len(actions) > MAX_LINE
            or not all(isinstance(a, str) for a in actions)
            or not isinstance(outcome, dict)
        ):
            raise bad(f"{where}: 'line' needs a list of actions and an outcome object")
        what_if = WhatIfLine(tuple(actions), _renumbered_outcome(outcome, where, bad))
    return Annotation(
        id=annotation_id,
        record=record,
        record_hash=_hex(item.get("record_hash"), 32, f"{where}: record_hash", bad),
        author=_text(item, "author", where, bad, MAX_AUTHOR),
        created=_text(item, "created", where, bad, 64),
        comment=_text(item, "comment", where, bad, MAX_COMMENT),
        glyph=glyph,
        cards=card_texts,
        line=what_if,
        evaluation=None if item.get("eval") is None else _evaluation(item["eval"], where, bad),
    )


#: The fields of an annotation's ``eval`` (the computer analysis, ``docs/analysis.md``): the seat
#: whose decision it was, the move played and the best move found with their values (points a
#: hand for the seat's side), the loss, and how many deals were sampled.
EVAL_FIELDS: Final[dict[str, type]] = {
    "seat": int,
    "played": str,
    "played_value": float,
    "best": str,
    "best_value": float,
    "loss": float,
    "deals": int,
}


def _evaluation(value: Any, where: str, bad: _Bad | None) -> dict[str, Any]:
    """An ``eval`` object with exactly the fields of ``EVAL_FIELDS``, checked."""

    def refuse(what: str) -> AnnotationError:
        return bad(f"{where}: {what}") if bad is not None else AnnotationError(f"{what}.")

    if not isinstance(value, dict) or set(value) != set(EVAL_FIELDS):
        raise refuse(f"'eval' must be an object with the fields {', '.join(EVAL_FIELDS)}")
    checked: dict[str, Any] = {}
    for key, kind in EVAL_FIELDS.items():
        item: Any = value[key]
        if kind is float and isinstance(item, int) and not isinstance(item, bool):
            item = float(item)
        if not isinstance(item, kind) or isinstance(item, bool):
            raise refuse(f"'eval.{key}' must be {'text' if kind is str else 'a number'}")
        if isinstance(item, str) and len(item) > MAX_COMMENT:
            raise refuse(f"'eval.{key}' is too long")
        if isinstance(item, int | float) and not -1e9 < item < 1e9:
            raise refuse(f"'eval.{key}' is out of range")
        checked[key] = item
    if checked["seat"] < 0 or checked["deals"] < 0 or checked["loss"] < 0:
        raise refuse("'eval' holds a negative seat, loss or number of deals")
    return checked


def _renumbered_outcome(outcome: dict[str, Any], where: str, bad: _Bad) -> dict[str, Any]:
    """A what-if outcome whose ``summary`` counts turns from 1.

    An outcome written before the tools counted from 1 has no ``counts_from``, and its summary of
    a line that leaves the hand going on names the engine's turn number (``... goes on: turn 31,
    ...`` for ``turn`` 31); that number is shown as people count it (turn 32), so that old and new
    files read alike. Other summaries name no hand or turn number.
    """
    counts_from = outcome.get("counts_from", 0)
    if counts_from == SUMMARY_COUNTS_FROM:
        return outcome
    if counts_from != 0:
        raise bad(f"{where}: 'counts_from' must be 0 or {SUMMARY_COUNTS_FROM}")
    renumbered = {**outcome, "counts_from": SUMMARY_COUNTS_FROM}
    turn, summary = outcome.get("turn"), outcome.get("summary")
    if isinstance(turn, int) and not isinstance(turn, bool) and isinstance(summary, str):
        old, new = f" goes on: turn {turn}, ", f" goes on: turn {shown_number(turn)}, "
        renumbered["summary"] = summary.replace(old, new, 1)
    return renumbered


def _check_text(value: str, name: str, limit: int) -> None:
    if len(value) > limit:
        raise AnnotationError(f"The {name} is over {limit} characters.")
