"""``python -m replay`` is the ``canasta-replay`` command."""

from .cli import main

main()
