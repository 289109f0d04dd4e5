"""Cards a hand is known to hold because every seat saw them go into it (Canasta: taken with
the pile; May I?: a discard taken or bought), kept per seat as tuples of faces so that a
state's ``copy()`` shares them. One bookkeeping for both games' states."""

from __future__ import annotations

from collections.abc import Iterable

Shown = tuple[tuple[int, ...], ...]


def with_faces(shown: Shown, seat: int, faces: tuple[int, ...]) -> Shown:
    """``shown`` with ``seat``'s known faces replaced by ``faces`` (a new tuple)."""
    changed = list(shown)
    changed[seat] = faces
    return tuple(changed)


def after_play(shown: Shown, seat: int, played: Iterable[int]) -> Shown:
    """``shown`` once ``seat`` played cards of the faces ``played``: each face played is no
    longer sure to be among the known ones it holds (the card may be the known one). The same
    tuple when nothing changed."""
    held = shown[seat]
    if not held:
        return shown
    left = list(held)
    for face in played:
        if face in left:
            left.remove(face)
    return shown if len(left) == len(held) else with_faces(shown, seat, tuple(left))
