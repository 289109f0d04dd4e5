"""The ``canasta-replay`` command."""

from __future__ import annotations

import click

from canasta_net import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="canasta-replay")
def main() -> None:
    """Audit, step through, annotate and export canasta-net game logs."""
