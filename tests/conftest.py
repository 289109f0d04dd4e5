"""The whole suite reads English whatever the developer's locale (docs/i18n.md): the CLI takes
its language from LANGUAGE/LC_ALL/LC_MESSAGES/LANG, and its subprocesses inherit them. Tests of
other languages say so with ``--lang`` or an explicit environment."""

from __future__ import annotations

import os

os.environ["LANGUAGE"] = "en"
