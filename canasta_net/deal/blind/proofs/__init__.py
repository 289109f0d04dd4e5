"""Proofs for the blind deal, version 2 (``docs/blind-proofs.md``; ``--deal blind``).

- :mod:`.group`: secp256k1 through ``coincurve`` (addition, which proofs need and version 1's
  group lacks).
- :mod:`.dleq`: Chaum–Pedersen proofs of discrete-logarithm equality.
- :mod:`.shuffle`: the proof that a deck is another permuted and raised to a committed key.
- :mod:`.stages`: the two proof-carrying stages, their checks (naming the seat), key checks.
"""

from __future__ import annotations

from . import dleq, group, shuffle, stages

__all__ = ["dleq", "group", "shuffle", "stages"]
