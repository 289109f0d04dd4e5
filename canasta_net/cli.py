"""The ``canasta`` command."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from . import __version__
from .eventlog import open_log_for_writing
from .local_table import recorded_match
from .rules import PRESETS, RuleSet, RuleSetError, preset
from .simulate import simulate


def _rules_or_fail(variant: str) -> RuleSet:
    try:
        return preset(variant)
    except RuleSetError as e:
        raise click.BadParameter(str(e), param_hint="--variant") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="canasta")
def main() -> None:
    """canasta-net: Canasta across a LAN, dealt fairly, every move recorded."""


@main.command()
def variants() -> None:
    """List the rule presets."""
    for name, rules in sorted(PRESETS.items()):
        click.echo(f"{name:12} {rules.description}")


@main.command(name="simulate")
@click.option("--variant", default="classic", show_default=True, help="Rule preset.")
@click.option("--hands", default=200, show_default=True, type=click.IntRange(1), help="Hands.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@click.option(
    "--bots",
    "bot_kinds",
    default="random",
    show_default=True,
    help="Bot kinds by seat, comma-separated (random, greedy); repeated over the seats.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record one match (at most HANDS hands) through the table protocol into this .cnlog.",
)
def simulate_command(
    variant: str, hands: int, seed: int, bot_kinds: str, as_json: bool, log_path: Path | None
) -> None:
    """Engine-only self-play: play HANDS hands between bots and report speed and problems.

    With --log, one match is played through the host's table protocol (commit-reveal deal,
    signed actions, checkpoints) and journaled to FILE, which canasta-replay can then audit.
    """
    rules = _rules_or_fail(variant)
    kinds = [k.strip() for k in bot_kinds.split(",") if k.strip()]
    if log_path is not None:
        _simulate_to_log(rules, hands, seed, kinds, log_path, as_json)
        return
    try:
        if not as_json and sys.stderr.isatty():
            with click.progressbar(length=hands, label="hands", file=sys.stderr) as bar:
                report = simulate(rules, hands, seed, kinds, lambda done: bar.update(1))
        else:
            report = simulate(rules, hands, seed, kinds)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(
            f"{data['variant']}: {data['hands']} hands ({data['matches']} matches) in "
            f"{data['seconds']} s: {data['hands_per_second']} hands/s, "
            f"{data['actions_per_second']} actions/s; stalls {data['stalls']}, "
            f"errors {data['errors']}"
        )
        for sample in data["error_samples"]:
            click.echo(f"  {sample}")
    if report.stalls or report.errors:
        sys.exit(1)


def _simulate_to_log(
    rules: RuleSet, hands: int, seed: int, kinds: list[str], path: Path, as_json: bool
) -> None:
    try:
        log_file = open_log_for_writing(path)
    except FileExistsError:
        raise click.UsageError(f"{path} exists: choose a new file for the log") from None
    start = time.perf_counter()
    with log_file:
        local = recorded_match(rules, log_file, seed=seed, bot_kinds=kinds or ["greedy"])
        local.play(max_hands=hands)
    seconds = time.perf_counter() - start
    result = local.host.match.result
    outcome = (
        result.describe()
        if result is not None
        else f"match not finished, scores {local.host.match.scores}"
    )
    data: dict[str, object] = {
        "log": str(path),
        "variant": rules.name,
        "hands": local.host.match.hands_played,
        "records": local.records + 1,
        "bytes": path.stat().st_size,
        "seconds": round(seconds, 3),
        "scores": local.host.match.scores,
        "result": None if result is None else result.describe(),
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(
            f"{path}: {data['hands']} hands of {rules.name}, {data['records']} records, "
            f"{data['bytes']} bytes in {data['seconds']} s; " + outcome
        )
