"""``python -m canasta_net`` is the ``canasta`` command."""

from .ui.cli import main

main()
