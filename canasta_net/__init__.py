"""canasta-net: Canasta across a LAN, dealt fairly, every move recorded and auditable."""

__version__ = "0.1.0"
