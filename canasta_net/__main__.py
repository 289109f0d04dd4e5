"""``python -m canasta_net`` is the ``canasta`` command."""

from .cli import main

main()
