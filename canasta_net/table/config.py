"""How a host table is set up, and how its log's header keeps that setup (``table_config``).

Everything a host needs to restart a table after a crash is written into the log's header when
the match starts: the seat plan (the host's seat, people's seats, bots), names, options, and the
password policy. ``canasta host --resume LOG`` rebuilds the :class:`TableConfig` from the header
alone; the rules, the deal mode and whether seeds are insecure come from the header's own fields.

The header goes to every seat, so a password is never written in clear: the log keeps a salted
scrypt hash of it (:class:`TablePassword`), and the host checks every join against that hash.
The map's layout is specified in ``docs/log-format.md`` ("The table's setup").
"""

from __future__ import annotations

import hmac
import math
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from ..games import CANASTA, Game, UnknownGame, game_from_header, game_of_rules

SlotKind = Literal["host", "player", "bot"]
SLOT_KINDS: tuple[SlotKind, ...] = ("host", "player", "bot")

TABLE_CONFIG_VERSION = 1  # the ``v`` of the header's ``table_config`` map
MAX_TEXT = 200  # characters of a table or seat name kept in the log
MAX_SECONDS = 86400.0  # a day: the longest hold or bot delay a log may ask for


class TableConfigError(ValueError):
    """The log's ``table_config`` cannot be used to restart the table (the message says why)."""


# ---------------------------------------------------------------------------- the password


@dataclass(frozen=True)
class TablePassword:
    """A table password as the log keeps it: a salted scrypt hash, never the password.

    scrypt with N = 2**log2_n, r, p as stored beside the hash, a random 16-byte salt and a
    32-byte output. Checking a join costs one scrypt (about 16 MiB and some tens of milliseconds
    at the default cost), which is also what slows down guessing from a seat's copy of the log.
    """

    salt: bytes
    digest: bytes
    log2_n: int = 14
    r: int = 8
    p: int = 1

    KDF = "scrypt"
    SALT_SIZE = 16
    DIGEST_SIZE = 32

    @classmethod
    def create(
        cls, password: str, *, salt: bytes | None = None, log2_n: int = 14, r: int = 8, p: int = 1
    ) -> TablePassword:
        salt = os.urandom(cls.SALT_SIZE) if salt is None else salt
        digest = _scrypt(password, salt, log2_n, r, p)
        return cls(salt, digest, log2_n, r, p)

    def matches(self, attempt: str) -> bool:
        """Whether ``attempt`` is the password (the comparison takes the same time either way)."""
        return hmac.compare_digest(
            _scrypt(attempt, self.salt, self.log2_n, self.r, self.p), self.digest
        )

    def to_fields(self) -> dict[str, Any]:
        return {
            "kdf": self.KDF,
            "log2_n": self.log2_n,
            "r": self.r,
            "p": self.p,
            "salt": self.salt,
            "hash": self.digest,
        }

    @classmethod
    def from_fields(cls, fields: Any) -> TablePassword:
        """Read the stored policy back, refusing anything outside the bounds a host accepts (a
        log must not make the host spend unbounded memory on each join)."""
        where = "table_config.password"
        data = _exact_map(fields, where, ("kdf", "log2_n", "r", "p", "salt", "hash"))
        if data["kdf"] != cls.KDF:
            raise TableConfigError(f"{where}.kdf is {data['kdf']!r}, not {cls.KDF!r}")
        log2_n = _int(data, "log2_n", where, 10, 20)
        r = _int(data, "r", where, 1, 32)
        p = _int(data, "p", where, 1, 16)
        if r * p >= 1 << 30:  # scrypt's own bound (RFC 7914), unreachable within the ones above
            raise TableConfigError(f"{where}: r * p is too large")
        salt = _bin(data, "salt", where, cls.SALT_SIZE, 64)
        digest = _bin(data, "hash", where, cls.DIGEST_SIZE, cls.DIGEST_SIZE)
        return cls(salt, digest, log2_n, r, p)


def _scrypt(password: str, salt: bytes, log2_n: int, r: int, p: int) -> bytes:
    kdf = Scrypt(salt=salt, length=TablePassword.DIGEST_SIZE, n=1 << log2_n, r=r, p=p)
    return kdf.derive(password.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------- the table's setup


@dataclass
class SeatPlan:
    kind: SlotKind
    name: str


@dataclass
class TableConfig:
    name: str
    rules: Any  # a RuleSet (the Canasta family) or MayIRules
    seats: list[SeatPlan]
    password: TablePassword | None = None
    hold_seconds: float = 60.0
    bot_delay: float = 0.0
    bot_kind: str = "heuristic"
    host_plays: bool = True
    insecure_seed: int | None = None  # deterministic seeds, for tests; marked insecure
    max_hands: int | None = None  # stop after this many hands (the log then ends mid-match)
    # the log's deal mode: or "blind-v2" (--deal blind: nobody, host included, sees another
    # seat's cards; every stage proved) or "blind" (the legacy version 1, --deal blind-v1)
    deal: str = "commit-reveal"

    @property
    def game(self) -> Game:
        return game_of_rules(self.rules)

    @property
    def people(self) -> int:
        """Seats for people (the host's included, even when a bot plays it)."""
        return sum(1 for plan in self.seats if plan.kind != "bot")

    @classmethod
    def simple(
        cls,
        name: str,
        rules: Any,
        players: int,
        *,
        host_plays: bool = True,
        password: str | TablePassword | None = None,
        **kw: Any,
    ) -> TableConfig:
        """Seat 0 the host; then ``players - 1`` remote players; bots for the rest."""
        plans = [SeatPlan("host", "host")]
        for seat in range(1, rules.players):
            kind: SlotKind = "player" if seat < players else "bot"
            plans.append(SeatPlan(kind, f"{kind}-{seat}" if kind == "bot" else ""))
        if isinstance(password, str):
            password = TablePassword.create(password)
        return cls(name, rules, plans, host_plays=host_plays, password=password, **kw)

    # ------------------------------------------------------------------ the log's copy
    def to_log_fields(self) -> dict[str, Any]:
        """The header's ``table_config`` map (version 1). The rules, the deal mode and whether
        the seeds are insecure are the header's own fields and are not repeated here. Names are
        kept to their first ``MAX_TEXT`` characters."""
        return {
            "v": TABLE_CONFIG_VERSION,
            "name": self.name[:MAX_TEXT],
            "seats": [{"kind": plan.kind, "name": plan.name[:MAX_TEXT]} for plan in self.seats],
            "host_plays": self.host_plays,
            "bot_kind": self.bot_kind,
            "hold_seconds": float(self.hold_seconds),
            "bot_delay": float(self.bot_delay),
            "max_hands": self.max_hands,
            "insecure_seed": self.insecure_seed,
            "password": None if self.password is None else self.password.to_fields(),
        }

    @classmethod
    def from_log_fields(cls, rules: Any, fields: Any, *, deal: str, insecure: bool) -> TableConfig:
        """The setup a header's ``table_config`` map describes, checked strictly: a missing,
        unknown or ill-typed field raises :class:`TableConfigError` naming it."""
        where = "table_config"
        if not isinstance(fields, dict):
            raise TableConfigError(f"{where} must be a map, not {type(fields).__name__}")
        version = fields.get("v")
        if type(version) is not int or version != TABLE_CONFIG_VERSION:
            raise TableConfigError(
                f"{where} has version {version!r}; this canasta-net reads version "
                f"{TABLE_CONFIG_VERSION}"
            )
        data = _exact_map(fields, where, _FIELDS)
        game = game_of_rules(rules)
        seats = _seat_plans(data["seats"], game.players)
        bot_kind = _str(data, "bot_kind", where, 1, 40)
        try:
            game.make_bot(bot_kind, random.Random(0))
        except ValueError as e:
            raise TableConfigError(f"{where}.bot_kind: {e}") from None
        insecure_seed = _optional_int(data, "insecure_seed", where, -(1 << 63), (1 << 63) - 1)
        if (insecure_seed is not None) != insecure:
            raise TableConfigError(
                f"{where}.insecure_seed disagrees with the header's 'insecure' ({insecure})"
            )
        password = data["password"]
        return cls(
            name=_str(data, "name", where, 0, MAX_TEXT),
            rules=rules,
            seats=seats,
            password=None if password is None else TablePassword.from_fields(password),
            hold_seconds=_seconds(data, "hold_seconds", where),
            bot_delay=_seconds(data, "bot_delay", where),
            bot_kind=bot_kind,
            host_plays=_bool(data, "host_plays", where),
            insecure_seed=insecure_seed,
            max_hands=_optional_int(data, "max_hands", where, 1, 1 << 31),
            deal=deal,
        )

    @classmethod
    def from_log_header(cls, fields: Mapping[str, Any]) -> TableConfig | None:
        """The setup a log's header (its decoded body: ``log.Header.fields``) keeps, or
        None for a log written before headers kept it. Raises :class:`TableConfigError`."""
        if "table_config" not in fields:
            return None
        kind = fields.get("game", CANASTA)
        rules = fields.get("rules")
        if not isinstance(kind, str) or not isinstance(rules, dict):
            raise TableConfigError("the header's game or rules are unreadable")
        try:
            game = game_from_header(kind, rules)
        except UnknownGame as e:
            raise TableConfigError(str(e)) from None
        deal, insecure = fields.get("deal"), fields.get("insecure")
        if not isinstance(deal, str) or not isinstance(insecure, bool):
            raise TableConfigError("the header's deal or insecure field is unreadable")
        return cls.from_log_fields(game.rules, fields["table_config"], deal=deal, insecure=insecure)


_FIELDS = (
    "v",
    "name",
    "seats",
    "host_plays",
    "bot_kind",
    "hold_seconds",
    "bot_delay",
    "max_hands",
    "insecure_seed",
    "password",
)


def _seat_plans(raw: Any, players: int) -> list[SeatPlan]:
    if not isinstance(raw, list) or len(raw) != players:
        raise TableConfigError(f"table_config.seats must list the game's {players} seats")
    plans = []
    for number, entry in enumerate(raw):
        where = f"table_config.seats[{number}]"
        data = _exact_map(entry, where, ("kind", "name"))
        kind = data["kind"]
        expected: tuple[str, ...] = ("host",) if number == 0 else ("player", "bot")
        if kind not in expected:
            raise TableConfigError(f"{where}.kind is {kind!r}, not one of {', '.join(expected)}")
        plans.append(SeatPlan(cast(SlotKind, kind), _str(data, "name", where, 0, MAX_TEXT)))
    return plans


# ---------------------------------------------------------------------------- strict readers


def _exact_map(value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TableConfigError(f"{where} must be a map, not {type(value).__name__}")
    missing = [key for key in keys if key not in value]
    if missing:
        raise TableConfigError(f"{where} lacks {', '.join(missing)}")
    unknown = sorted(str(key) for key in value if key not in keys)
    if unknown:
        raise TableConfigError(f"{where} has unknown fields {', '.join(unknown)}")
    return value


def _int(data: Mapping[str, Any], key: str, where: str, low: int, high: int) -> int:
    value = data[key]
    if type(value) is not int or not low <= value <= high:
        raise TableConfigError(f"{where}.{key} must be an integer from {low} to {high}")
    return value


def _optional_int(data: Mapping[str, Any], key: str, where: str, low: int, high: int) -> int | None:
    return None if data[key] is None else _int(data, key, where, low, high)


def _str(data: Mapping[str, Any], key: str, where: str, shortest: int, longest: int) -> str:
    value = data[key]
    if type(value) is not str or not shortest <= len(value) <= longest:
        raise TableConfigError(f"{where}.{key} must be text of {shortest} to {longest} characters")
    return value


def _bool(data: Mapping[str, Any], key: str, where: str) -> bool:
    value = data[key]
    if type(value) is not bool:
        raise TableConfigError(f"{where}.{key} must be true or false")
    return value


def _bin(data: Mapping[str, Any], key: str, where: str, shortest: int, longest: int) -> bytes:
    value = data[key]
    if type(value) is not bytes or not shortest <= len(value) <= longest:
        raise TableConfigError(f"{where}.{key} must be {shortest} to {longest} bytes")
    return value


def _seconds(data: Mapping[str, Any], key: str, where: str) -> float:
    value = data[key]
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 <= value <= MAX_SECONDS:
        raise TableConfigError(f"{where}.{key} must be from 0 to {MAX_SECONDS:g} seconds")
    return float(value)


__all__ = [
    "SLOT_KINDS",
    "TABLE_CONFIG_VERSION",
    "SeatPlan",
    "SlotKind",
    "TableConfig",
    "TableConfigError",
    "TablePassword",
]
