"""The Canasta rules engine: rule sets, actions, melds, the hand's state, scoring, matches,
positions and bots. Pure and deterministic: no I/O.
"""
