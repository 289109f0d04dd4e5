"""The network: the wire protocol and its framing, TLS identities, known hosts, LAN discovery, and
the thin Twisted host and peer.
"""
