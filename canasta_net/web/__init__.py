"""The player's own browser page: served by the player's own process on 127.0.0.1
(``docs/web-client.md``). ``server`` answers the page (``move_socket``: its moves' WebSocket),
``player`` is the seat's player in it, ``page`` runs it for the table commands; the page's files
are in ``static/``."""
