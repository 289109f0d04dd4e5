"""Refusal reasons: one template per reason key, filled with the engine's parameters, worded in
each reader's language (canasta_net/reasons.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from canasta_net.canasta.actions import parse_action
from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState
from canasta_net.errors import REASONS, IllegalAction
from canasta_net.i18n import translator
from canasta_net.mayi.reasons import REASONS as MAYI_REASONS
from canasta_net.reasons import (
    REASON_TEMPLATES,
    reason_sentence,
    refuse,
    template_fields,
    wire_args,
)
from canasta_net.ui.table_model import TableModel

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "canasta_net").rglob("*.py"))


def refuse_calls() -> list[tuple[str, int, list[str], set[str]]]:
    """Every ``refuse(...)`` in the package: (file, line, its possible keys, its parameters)."""
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if "reasons import refuse" not in text:
            continue  # another module's own ``refuse`` (the log reader's)
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "refuse"
            ):
                continue
            first = node.args[0]
            keys = [
                n.value
                for n in ast.walk(first)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            found.append((path.name, node.lineno, keys, {k.arg for k in node.keywords if k.arg}))
    return found


def test_the_engine_refuses_only_through_the_template_table() -> None:
    """No sentence of a refusal is written outside the table: every IllegalAction is made by
    ``refuse`` (errors.py defines it, reasons.py makes it)."""
    direct = [
        f"{p.relative_to(ROOT)}:{i + 1}"
        for p in SOURCES
        if p.name not in {"errors.py", "reasons.py"}
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines())
        if "IllegalAction(" in line and "``" not in line
    ]
    assert direct == []


def test_every_refusal_names_a_template_and_fills_exactly_its_placeholders() -> None:
    calls = refuse_calls()
    assert len(calls) > 90  # the engine's refusals, all of them
    used = set()
    for where, line, keys, params in calls:
        assert keys, (where, line)
        for key in keys:
            assert key in REASON_TEMPLATES, (where, line, key)
            assert template_fields(REASON_TEMPLATES[key]) == params, (where, line, key)
            used.add(key)
    # no template left unused but the codes' own sentences that only their variants use
    assert used == set(REASON_TEMPLATES) - {"initial-meld-pending", "not-in-this-game"}


def test_every_code_has_its_own_template() -> None:
    """A client shows a code's own template for a variant it does not know."""
    codes = {key.partition(".")[0] for key in REASON_TEMPLATES}
    assert all(code in REASON_TEMPLATES for code in codes)
    assert set(REASONS) <= codes and set(MAYI_REASONS) <= codes


@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
def test_every_template_is_translated_with_its_placeholders(lang: str) -> None:
    tr = translator(lang)
    for key, template in REASON_TEMPLATES.items():
        text = tr.gettext(template)
        assert text != template, (lang, key)
        assert template_fields(text) == template_fields(template), (lang, key)


def test_a_real_refusal_carries_its_parameters_and_reads_in_each_language() -> None:
    rules = preset("classic")
    state = HandState(rules, list(range(rules.deck_size)), dealer=0)
    seat = state.to_move
    other = (seat + 1) % rules.players
    with pytest.raises(IllegalAction) as caught:
        state.apply(parse_action("draw"), other)
    e = caught.value
    assert (e.code, e.variant, e.params) == (
        "not-your-turn",
        None,
        {"to_move": seat, "seat": other},
    )
    assert e.message == f"It is seat {seat}'s turn, not {other}'s."
    args = wire_args(e.params)
    assert reason_sentence(e.code, args) == e.message
    ru = reason_sentence(e.code, args, e.variant, translator("ru").gettext)
    assert ru == f"Сейчас ход места {seat}, а не места {other}."
    with pytest.raises(IllegalAction) as caught:
        state.apply(parse_action("discard KH"), seat)  # in the draw step
    e = caught.value
    assert (e.code, e.params) == ("wrong-phase", {"phase": "draw"})
    pl = reason_sentence(e.code, wire_args(e.params), e.variant, translator("pl").gettext)
    assert pl == "Na tym etapie tury to niemożliwe (dobieranie)."


def test_variants_and_what_a_client_cannot_word() -> None:
    e = refuse("pile-take-cards.which-meld", count=2, card="7H")
    assert (e.code, e.variant) == ("pile-take-cards", "which-meld")
    bg = translator("bg").gettext
    assert reason_sentence(e.code, wire_args(e.params), e.variant, bg) == (
        "Отборът ви има 2 комбинации, към които може да отиде 7H: посочете една "
        "('take-pile onto N')."
    )
    # an old host (no args), an unknown code, args that do not fill the template: None
    assert reason_sentence("not-your-turn", None) is None
    assert reason_sentence("from-a-newer-host", {}) is None
    assert reason_sentence("not-your-turn", {"seat": "1"}) is None
    # an unknown variant: the code's own sentence, if the args fill it
    assert reason_sentence("pile-empty", {}, "newer", bg) == "Купчината е празна."


def test_the_model_words_a_refusal_in_its_readers_language() -> None:
    ru, en = TableModel(tr=translator("ru")), TableModel(tr=translator("en"))
    for model in (ru, en):
        model.refused("card-not-in-hand", "QS is not in your hand.", "discard QS", {"card": "QS"})
    assert ru.snapshot()["refusal"]["message"] == "Карты QS нет у вас на руке."
    assert en.snapshot()["refusal"]["message"] == "QS is not in your hand."
    old = TableModel(tr=translator("ru"))
    old.refused("card-not-in-hand", "QS is not in your hand.", "discard QS")  # an older host
    assert old.snapshot()["refusal"]["message"] == "QS is not in your hand."
