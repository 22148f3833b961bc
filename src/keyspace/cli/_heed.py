"""scoped-heed environments on the command line.

Every command takes a scoped-heed database as the URL
``scoped-heed:///path/to/env?name=NAME[&api=API][&unnamed_default=true][&key=T][&value=T]``
(``migrate`` on either side), and the single-store commands also as
``URL --scoped-heed NAME [--api API] [--unnamed-default] [--key-type T] [--value-type T]``
with a plain LMDB path. ``API`` is ``raw_bytes`` (default), ``bytes_keys`` or ``types``.

Without ``key``/``value`` types keys and values are the stored bytes (the bincode
bytes of typed databases), which is what ``migrate`` copies. With them, keys and
values are written and shown as text: ``String`` as itself, integers in decimal,
``bool`` as ``true``/``false``, ``Vec<u8>`` as bytes (``--hex`` for hex).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import parse_qsl, quote

import click

from .. import bincode, scoped_heed
from ..codecs import BYTES, Codec
from ..errors import InvalidKey, StoreError
from ..schemes.scoped_heed import APIS
from ..stores import parse_url
from ._format import InputError

__all__ = ["HEED_URL", "TYPES", "heed_location", "heed_options", "heed_url", "open_heed", "resolve_url"]

HEED_URL = "scoped-heed:"

F = TypeVar("F", bound=Callable[..., Any])

_INTS = {c.name: c for c in (bincode.U8, bincode.U16, bincode.U32, bincode.U64)} | {
    c.name: c for c in (bincode.I8, bincode.I16, bincode.I32, bincode.I64)
}
TYPES = ("String", "Vec<u8>", "bool", *_INTS)
"""The Rust key and value types the command line reads and prints as text."""


class _TextBridge:
    """A bincode codec seen from the command line, which speaks bytes: encode takes
    the command line's bytes (UTF-8 text, or raw bytes for ``Vec<u8>``), decode
    gives them back."""

    def __init__(self, rust: str) -> None:
        self.name = f"cli:{rust}"
        self.rust = rust

    def encode(self, obj: Any) -> bytes:
        raw = BYTES.encode(obj)
        if self.rust == "Vec<u8>":
            return bincode.BYTES.encode(raw)
        text = raw.decode("utf-8", "surrogateescape")
        if self.rust == "String":
            return bincode.STRING.encode(text)
        if self.rust == "bool":
            if text not in ("true", "false"):
                raise InvalidKey(f"{text!r} is not a bool; write true or false")
            return bincode.BOOL.encode(text == "true")
        try:
            number = int(text)
        except ValueError:
            raise InvalidKey(f"{text!r} is not an integer ({self.rust})") from None
        return _INTS[self.rust].encode(number)

    def decode(self, raw: bytes) -> bytes:
        if self.rust == "Vec<u8>":
            return bytes(bincode.BYTES.decode(raw))
        if self.rust == "String":
            return str(bincode.STRING.decode(raw)).encode("utf-8")
        if self.rust == "bool":
            return b"true" if bincode.BOOL.decode(raw) else b"false"
        return str(_INTS[self.rust].decode(raw)).encode()


def _codec(rust: str | None) -> Codec | None:
    if rust is None:
        return None
    if rust not in TYPES:
        raise InputError(f"unknown scoped-heed key/value type {rust!r}; known: {', '.join(TYPES)}")
    return _TextBridge(rust)


def _flag(text: str) -> bool:
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise InputError(f"unnamed_default={text!r} is not true or false")


def heed_url(
    path: str, name: str, api: str, unnamed_default: bool, key_type: str | None, value_type: str | None
) -> str:
    """The ``scoped-heed:`` URL of a database given by options (``path``: the
    environment, as a path or an LMDB URL)."""
    location = _environment(path, path)
    query = [f"name={quote(name, safe='')}", f"api={api}"]
    if unnamed_default:
        query.append("unnamed_default=true")
    if key_type is not None:
        query.append(f"key={quote(key_type, safe='')}")
    if value_type is not None:
        query.append(f"value={quote(value_type, safe='')}")
    return f"{HEED_URL}//{location}?{'&'.join(query)}"


def heed_location(url: str) -> tuple[str, str]:
    """The environment's path and the query of a ``scoped-heed:`` URL
    (``scoped-heed:///env?name=N``; the path may also be written as an
    ``lmdb://`` URL, as :func:`heed_url` takes it).

    >>> heed_location("scoped-heed:lmdb:///srv/env?name=users")
    ('/srv/env', 'name=users')
    """
    rest = url[len(HEED_URL) :]
    rest = rest[2:] if rest.startswith("//") else rest
    path, _, query = rest.partition("?")
    return (_environment(path, url) if path else ""), query


def _environment(location: str, given: str) -> str:
    """The directory of the LMDB environment ``location`` names, read as any store
    URL is (:func:`~keyspace.stores.parse_url`: a path or an ``lmdb:`` URL
    without options); ``given`` is the text to name in an error."""
    try:
        engine, path, options = parse_url(location)
    except StoreError as exc:
        raise InputError(f"{exc} (in {given!r})") from None
    if engine != "lmdb":
        raise InputError(f"a scoped-heed environment is an LMDB directory, not a {engine} store: {given!r}")
    if options:
        raise InputError(f"a scoped-heed environment takes no store options: {given!r}")
    return path


def open_heed(url: str, *, readonly: bool) -> tuple[scoped_heed.ScopedHeedKeyspace, str]:
    """Open a ``scoped-heed:`` URL; also returns how it was opened, for messages."""
    path, query = heed_location(url)
    try:
        params = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError as exc:
        raise InputError(f"malformed scoped-heed URL {url!r}: {exc}") from None
    unknown = sorted(set(params) - {"name", "api", "unnamed_default", "key", "value"})
    if unknown:
        raise InputError(
            f"unknown parameter(s) {', '.join(unknown)} in {url!r}; known: name, api, "
            "unnamed_default, key, value"
        )
    name = params.get("name")
    if not path or not name:
        raise InputError(
            f"a scoped-heed URL names the environment and the database: {url!r} "
            "(scoped-heed:///path/to/env?name=NAME)"
        )
    api = params.get("api", "raw_bytes")
    if api not in APIS:
        raise InputError(f"unknown scoped-heed api {api!r} in {url!r}; known: {', '.join(APIS)}")
    unnamed = _flag(params.get("unnamed_default", "false"))
    key, value = _codec(params.get("key")), _codec(params.get("value"))
    if key is not None and api != "types":
        raise InputError(f"key types are for api=types; the {api} database has raw bytes keys")
    try:
        ks = scoped_heed.open(
            path,
            name,
            api=api,
            unnamed_default=unnamed,
            key=key or BYTES,
            value=value or BYTES,
            readonly=readonly,
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    types = f", key {params['key']}" if "key" in params else ""
    types += f", value {params['value']}" if "value" in params else ", stored bytes"
    return ks, f"scoped-heed database {name!r} ({api}{', unnamed default' if unnamed else ''}{types})"


def heed_options(f: F) -> F:
    """``--scoped-heed NAME`` and its companions, for commands on one store. The
    command receives ``url`` already resolved (:func:`resolve_url`), and none of
    the five options."""

    @functools.wraps(f)
    def resolved(
        *args: Any,
        url: str,
        heed_name: str | None = None,
        api: str | None = None,
        unnamed_default: bool = False,
        key_type: str | None = None,
        value_type: str | None = None,
        **kwargs: Any,
    ) -> Any:
        return f(*args, url=resolve_url(url, heed_name, api, unnamed_default, key_type, value_type), **kwargs)

    g = cast(F, resolved)
    g = click.option(
        "--value-type",
        type=click.Choice(TYPES),
        default=None,
        help="scoped-heed: the Rust value type V (default: the stored bytes).",
    )(g)
    g = click.option(
        "--key-type",
        type=click.Choice(TYPES),
        default=None,
        help="scoped-heed: the Rust key type K of a types database (default: stored bytes).",
    )(g)
    g = click.option(
        "--unnamed-default",
        is_flag=True,
        help="scoped-heed: the default scope is the unnamed database (unnamed_for_default).",
    )(g)
    g = click.option(
        "--api",
        type=click.Choice(APIS),
        default=None,
        help="scoped-heed: the builder of the database (raw_bytes, bytes_keys, types; default: raw_bytes).",
    )(g)
    return click.option(
        "--scoped-heed",
        "heed_name",
        default=None,
        metavar="NAME",
        help="URL is a scoped-heed environment; open its scoped database NAME.",
    )(g)


def resolve_url(
    url: str,
    heed_name: str | None,
    api: str | None,
    unnamed_default: bool,
    key_type: str | None,
    value_type: str | None,
) -> str:
    """``url`` itself, or the ``scoped-heed:`` URL when ``--scoped-heed`` is given
    (``api`` ``None``: raw_bytes)."""
    if heed_name is None:
        if api is not None or key_type is not None or value_type is not None or unnamed_default:
            raise click.UsageError(
                "--api, --key-type, --value-type and --unnamed-default need --scoped-heed NAME"
            )
        return url
    if url.startswith(HEED_URL):
        raise click.UsageError("give either a scoped-heed: URL or --scoped-heed, not both")
    return heed_url(url, heed_name, api or "raw_bytes", unnamed_default, key_type, value_type)
