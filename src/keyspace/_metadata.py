"""The scheme records a keyspace keeps in its store, and how to read them safely.

Schemes with reserved space (a key no user key can equal) record
``{"keyspace": 1, "scheme": name, "params": {...}}`` as JSON at their
``metadata_key``. Reopening compares the record with the scheme asked for.

A keyspace writes only where its scheme's :meth:`~Scheme.footprint` says (a
``TupleScheme``: the keys after its ``raw_prefix``), and its records, so several
keyspaces with disjoint footprints (tuple schemes under different raw prefixes,
and one at the root) can share a store: a record found elsewhere counts only
when the two keyspaces' footprints overlap. A keyspace whose scheme declares a
:attr:`~Scheme.raw_prefix` also lists itself in the *footprint registry*, one
key per raw prefix under :data:`REGISTRY_START` (outside every keyspace's keys),
so that a keyspace whose footprint holds it finds it with one short scan,
whichever wrote first. Nothing here asks which class a scheme is: every fact
comes from what the scheme declares.

A record that cannot be read (not JSON, truncated, empty, another format version,
parameters the scheme does not take, nesting too deep) is never passed over nor
overwritten: :class:`UnreadableRecord` names where it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from ._bytes import prefix_end
from .errors import KeyspaceError, SchemeMismatch, UnreadableRecord, show_bytes
from .schemes import SCHEMES, AsciiHex, Scheme, ScopeHash, TupleScheme, scheme_from_name
from .stores._base import ReadView, Store, WriteView, keys_in
from .tuples import pack

__all__ = [
    "DIRECTORY_FOOTPRINT",
    "DIRECTORY_RECORD",
    "FEATURE_RECORD",
    "LAYOUT_START",
    "LAYOUT_STOP",
    "REGISTRY_START",
    "check",
    "directories_overlap",
    "directory_node_ranges",
    "directory_record",
    "feature_record_key",
    "features_recorded_but_off",
    "first_meeting",
    "overlapping",
    "parse",
    "read",
    "read_features",
    "record",
    "refuse_features_off",
    "registry_key",
    "reserved_prefix",
    "reserved_ranges",
    "write",
]

_FORMAT = 1
LAYOUT_START = b"\xff\xffkeyspace-layout\x00"
"""Where a keyspace whose scheme declares :attr:`~Scheme.records_layout`
(LengthPrefixed) records its leaves: ``ff ff`` announces a first component of
65535 bytes, which a key this short cannot hold, so no scope below the root can
have a key here; a root that holds keys leaves this range out."""
LAYOUT_STOP = b"\xff\xffkeyspace-layout\x01"
REGISTRY_START = b"\xffkeyspace\x00"
"""Keys ``REGISTRY_START + raw_prefix`` list the raw-prefixed tuple keyspaces."""
_REGISTRY_STOP = prefix_end(REGISTRY_START)
_RESERVED_PREFIX = b"\xffkeyspace"
_RESERVED_STOP = b"\xffkeyspacf"

_Range = tuple[bytes, bytes | None]

DIRECTORY_RECORD = b"\xffkeyspace-directories"
"""Present once a keyspace's directory tree was changed: directories are in use,
so their nodes (``fe``) and allocated prefixes (``14``..``1c``: packed integers)
and any manual prefix a node names are theirs."""
DIRECTORY_FOOTPRINT: tuple[tuple[bytes, bytes], ...] = ((b"\x14", b"\x1d"), (b"\xfe", b"\xff"))
"""Where a directory tree keeps its nodes and allocated prefixes."""


def record(scheme: Scheme) -> bytes:
    """The metadata value for ``scheme``."""
    return json.dumps(
        {"keyspace": _FORMAT, "scheme": scheme.name, "params": dict(scheme.params())},
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


def _unreadable(key: bytes, raw: bytes, why: str, url: str) -> UnreadableRecord:
    where = f" of {url}" if url else ""
    return UnreadableRecord(
        f"the scheme record at key {show_bytes(key)}{where} is unreadable ({why}): {show_bytes(raw)}; "
        "it was left as it is: restore it, or remove it if the store holds no keyspace data"
    )


def parse(key: bytes, raw: bytes, url: str = "") -> Scheme:
    """The scheme that the record ``raw``, found at ``key``, names. Raises
    :class:`UnreadableRecord` for anything that is not a well-formed record of
    this format whose scheme keeps its record at ``key``."""
    try:
        doc: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _unreadable(key, raw, f"not JSON: {str(exc)[:80]}", url) from None
    if not isinstance(doc, dict):
        raise _unreadable(key, raw, "not a JSON object", url)
    version = doc.get("keyspace")
    if type(version) is not int or version != _FORMAT:  # true and 1.0 equal 1 in Python
        raise _unreadable(key, raw, f"format version {version!r}, this library reads {_FORMAT}", url)
    name, params = doc.get("scheme"), doc.get("params", {})
    if not isinstance(name, str) or not isinstance(params, dict):
        raise _unreadable(key, raw, "'scheme' must be a string and 'params' an object", url)
    try:
        found = scheme_from_name(name, **params)
    except (KeyspaceError, TypeError, ValueError) as exc:
        raise _unreadable(key, raw, f"scheme {name!r} with these parameters: {exc}", url) from None
    if found.metadata_key != key and registry_key(found) != key:
        raise _unreadable(key, raw, f"it names {found!r}, whose record is not kept at this key", url)
    return found


def _claims_record(raw: bytes) -> bool:
    """Whether ``raw`` says it is a keyspace record (a JSON object with a
    ``"keyspace"`` member), however broken the rest is."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and "keyspace" in doc


def _candidate_keys(scheme: Scheme | None) -> list[bytes]:
    keys: list[bytes] = []
    if scheme is not None and scheme.metadata_key is not None:
        keys.append(scheme.metadata_key)
    for default in (TupleScheme(), AsciiHex(), ScopeHash()):
        key = default.metadata_key
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def reserved_ranges(
    scheme: Scheme, store_keeps: tuple[tuple[bytes, bytes], ...] = ()
) -> tuple[tuple[bytes, bytes], ...]:
    """Where keyspaces keep their records in a store, ascending and disjoint: the
    scheme records that :func:`read` looks for (``scheme``'s and those of the
    default schemes), every key under ``ff "keyspace"`` (the default records and
    the footprint registry), and the recorded LengthPrefixed layout. No scope's
    key may be stored there (the catalog refuses it on every path); a scheme whose
    stored keys can never land there (tuple, AsciiHex, ScopeHash keys) is never
    refused anything. The ScopeHash registry (4-byte keys) lies outside every
    scope's own range, so it needs no entry here. ``store_keeps``: the ranges the
    store keeps for its own use (its ``capabilities.reserved``), reserved too."""
    spans = [(_RESERVED_PREFIX, _RESERVED_STOP), (LAYOUT_START, LAYOUT_STOP), *store_keeps]
    spans += [(key, key + b"\x00") for key in _candidate_keys(scheme)]
    spans.sort()
    merged: list[tuple[bytes, bytes]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def holds_data(view: ReadView) -> bool:
    """Whether ``view`` holds a key outside the records keyspaces keep (every key
    under ``ff "keyspace"`` and the recorded LengthPrefixed layout). A store whose
    only keys are such records (a keyspace with a feature on whose only commit
    was a clear, which records the feature) holds no data: it opens as an empty
    store would. Cost: at most three scans of one key each.

    >>> from keyspace.stores import MemoryStore
    >>> store = MemoryStore()
    >>> store.put(b"\\xffkeyspace-features\\x00", b"{}")
    >>> holds_data(store)
    False
    >>> store.put(b"users", b"1")
    >>> holds_data(store)
    True
    """
    start = b""
    for lo, hi in ((_RESERVED_PREFIX, _RESERVED_STOP), (LAYOUT_START, LAYOUT_STOP)):
        if next(iter(view.scan(start, lo, limit=1)), None) is not None:
            return True
        start = hi
    return next(iter(view.scan(start, None, limit=1)), None) is not None


def registry_key(scheme: Scheme) -> bytes | None:
    """The footprint-registry key of a keyspace whose scheme declares a
    :attr:`~Scheme.raw_prefix` (a raw-prefixed tuple keyspace), else ``None``."""
    prefix = scheme.raw_prefix
    return REGISTRY_START + prefix if prefix else None


def _footprint(scheme: Scheme) -> list[_Range]:
    """The byte ranges a keyspace of ``scheme`` may write: the scheme's declared
    :meth:`~Scheme.footprint` (only a tuple scheme's is bounded: its stored keys
    continue ``raw_prefix`` with ``05``; every other scheme may write anywhere),
    then its record and registry entry, single keys beside them."""
    records = (scheme.metadata_key, registry_key(scheme))
    return [*scheme.footprint(), *(_point(key) for key in records if key is not None)]


def _point(key: bytes) -> _Range:
    return key, key + b"\x00"


def _overlaps(a: _Range, b: _Range) -> bool:
    (a_start, a_stop), (b_start, b_stop) = a, b
    return (a_stop is None or b_start < a_stop) and (b_stop is None or a_start < b_stop)


def first_meeting(spans: Iterable[_Range], others: Iterable[_Range]) -> tuple[_Range, _Range] | None:
    """The first pair ``(span, other)`` of a range of ``spans`` and one of
    ``others`` that overlap (half-open; a ``None`` end: no end), else ``None``.
    The one test of whether two sets of ranges meet (e.g. a footprint and
    :data:`DIRECTORY_FOOTPRINT`). Cost: one comparison pair per pair of ranges."""
    others = tuple(others)
    for span in spans:
        for other in others:
            if _overlaps(span, other):
                return span, other
    return None


def _shares_space(found: Scheme, wanted: Scheme) -> bool:
    return any(_overlaps(a, b) for a in _footprint(found) for b in _footprint(wanted))


def _might_be_data(key: bytes, wanted: Scheme | None) -> bool:
    """Whether ``key`` could be a user key of ``wanted`` (a scheme without reserved
    space may store anything anywhere), so a non-record value there is data."""
    if wanted is None or key == wanted.metadata_key:
        return False
    if wanted.metadata_key is None:
        return True
    return any(_overlaps(_point(key), r) for r in wanted.footprint()) and not _is_reserved(key)


def _is_reserved(key: bytes) -> bool:
    return key.startswith(_RESERVED_PREFIX)


def read(store: ReadView, scheme: Scheme | None, url: str = "") -> Scheme | None:
    """The scheme recorded in ``store`` (looked up where ``scheme`` and the default
    instances of the schemes with metadata keep it), or ``None``. A record of
    another keyspace whose keys cannot meet those of ``scheme`` (tuple schemes
    under disjoint raw prefixes) is passed over. Raises :class:`UnreadableRecord`
    for a record that cannot be read (a value at another scheme's record key
    that ``scheme`` could hold as its own data counts as a record only when it
    says it is one). Cost: up to four point reads."""
    for key in _candidate_keys(scheme):
        raw = store.get(key)
        if raw is None:
            continue
        if _might_be_data(key, scheme) and not _claims_record(raw):
            continue
        found = parse(key, raw, url)
        if scheme is None or key == scheme.metadata_key or _shares_space(found, scheme):
            return found
    return None


def _layout_recorder() -> Scheme:
    """The registered scheme whose keyspaces record their layout (LengthPrefixed):
    the one that layout records stand for (:attr:`~Scheme.records_layout`)."""
    return next(cls() for cls in SCHEMES.values() if cls.records_layout)


def overlapping(view: ReadView, scheme: Scheme, url: str = "") -> Scheme | None:
    """A raw-prefixed keyspace listed in the footprint registry of ``view`` whose
    footprint overlaps that of ``scheme``, or a keyspace that recorded its layout
    there (LengthPrefixed: it may write anywhere) when ``scheme`` records none,
    else ``None``. Cost: one scan of one entry per raw-prefixed keyspace, and a
    seek."""
    if not scheme.records_layout and next(iter(view.scan(LAYOUT_START, LAYOUT_STOP, limit=1)), None):
        return _layout_recorder()
    own = registry_key(scheme)
    for key, raw in view.scan(REGISTRY_START, _REGISTRY_STOP):
        if key == own:
            continue
        other = parse(key, raw, url)
        if other != scheme and _shares_space(other, scheme):
            return other
    return None


def directory_record() -> bytes:
    """The value of :data:`DIRECTORY_RECORD`."""
    return json.dumps({"directories": _FORMAT, "node": "fe", "content": ""}, sort_keys=True).encode()


def directory_node_ranges(scheme: Scheme) -> list[tuple[bytes, bytes]]:
    """The ranges of directory nodes that would name a prefix meeting the footprint
    of ``scheme``: per footprint range, the nodes of the prefixes inside it and the
    nodes of each shorter prefix that the range's start begins with (a node's keys
    all begin ``fe + pack((prefix,))``). What an open of ``scheme`` reads when
    directories are in use (so :func:`keyspace.access.grant` can allow exactly
    these reads). Cost: no I/O."""
    ranges: list[tuple[bytes, bytes]] = []
    for lo, hi in scheme.footprint():
        start = b"\xfe" + pack((lo,))
        ranges.append((start, b"\xfe" + pack((hi,)) if hi is not None else b"\xff"))
        for size in range(1, len(lo)):
            node = b"\xfe" + pack((lo[:size],))
            end = prefix_end(node)
            assert end is not None  # a node key begins fe, never all ff
            ranges.append((node, end))
    return ranges


def directories_overlap(view: ReadView, scheme: Scheme) -> bool:
    """Whether ``view`` records directories whose nodes or prefixes meet the
    footprint of ``scheme`` (an allocated range, the nodes, or a prefix a node
    names: one seek of each of :func:`directory_node_ranges`). False where no
    directory record is. Cost: a point read."""
    if view.get(DIRECTORY_RECORD) is None:
        return False
    if first_meeting(scheme.footprint(), DIRECTORY_FOOTPRINT) is not None:
        return True
    return any(
        next(keys_in(view, start, stop, limit=1), None) is not None
        for start, stop in directory_node_ranges(scheme)
    )


def recorded_footprints(
    view: ReadView, url: str = "", *, directories: bool = True
) -> list[tuple[bytes, bytes | None]]:
    """Where the keyspaces recorded in ``view`` (default records, footprint
    registry, and with ``directories`` the directory tree) may keep keys: their
    footprints and records, unordered. Cost: up to four point reads and a scan
    of the registry."""
    spans: list[tuple[bytes, bytes | None]] = []
    if directories and view.get(DIRECTORY_RECORD) is not None:
        spans += DIRECTORY_FOOTPRINT
    for key in _candidate_keys(None):
        raw = view.get(key)
        if raw is not None and _claims_record(raw):
            spans += _footprint(parse(key, raw, url))
    for key, raw in view.scan(REGISTRY_START, _REGISTRY_STOP):
        spans += _footprint(parse(key, raw, url))
    return spans


def reserved_prefix(scheme: Scheme) -> bool:
    """Whether ``scheme`` would write where the records live (a raw prefix that
    starts with ``ff "keyspace"``)."""
    return scheme.raw_prefix.startswith(_RESERVED_PREFIX)


def check(recorded: Scheme, wanted: Scheme, url: str) -> None:
    """Raise :class:`SchemeMismatch` unless ``wanted`` is the recorded scheme."""
    if recorded != wanted:
        raise SchemeMismatch(
            f"the store at {url!r} records scheme {recorded!r}; it cannot be opened with {wanted!r} "
            "(open it without a scheme to use the recorded one)"
        )


def write(view: WriteView, scheme: Scheme) -> None:
    """Record ``scheme`` in the store (a no-op for schemes without reserved space),
    and list a raw-prefixed tuple keyspace in the footprint registry."""
    key = scheme.metadata_key
    if key is not None:
        view.put(key, record(scheme))
    entry = registry_key(scheme)
    if entry is not None:
        view.put(entry, record(scheme))


FEATURE_RECORD: Final = b"\xffkeyspace-features\x00"
"""Where a keyspace records its features (JSON ``{name: params}``), followed by
``pack((raw_prefix,))``: inside the reserved ``ff "keyspace"`` range."""


def feature_record_key(scheme: Scheme) -> bytes:
    """The key of the feature record of a keyspace of ``scheme`` (one per raw prefix)."""
    return FEATURE_RECORD + pack((scheme.raw_prefix,))


def read_features(view: ReadView, scheme: Scheme, url: str = "") -> dict[str, dict[str, Any]]:
    """The features recorded for the keyspace of ``scheme`` in ``view``: one point
    read. :class:`UnreadableRecord` for a record that is not a JSON object of objects."""
    key = feature_record_key(scheme)
    raw = view.get(key)
    if raw is None:
        return {}
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise UnreadableRecord(
            f"the feature record at key {show_bytes(key)} of {url} is unreadable: {show_bytes(raw)}; "
            "it was left as it is"
        )
    return doc


def features_recorded_but_off(view: ReadView, store: Store, scheme: Scheme, url: str = "") -> list[str]:
    """The features ``view`` records for the keyspace of ``scheme`` that the
    keyspace whose store is ``store`` does not run (it opened the store before
    another keyspace turned them on): one point read. Only features that run
    hooks are recorded (``changes`` on etcd, whose revisions serve every
    writer, is not)."""
    recorded = read_features(view, scheme, url)
    if not recorded:
        return []
    hook = getattr(store, "hook", None)  # None: an engine's store, no feature on
    return [name for name in sorted(recorded) if hook is None or hook(name) is None]


def refuse_features_off(view: ReadView, store: Store, scheme: Scheme, url: str = "") -> None:
    """Inside a write of the keyspace of ``scheme`` whose store is ``store``:
    :class:`SchemeMismatch` where ``view`` records a feature that keyspace does
    not run (:func:`features_recorded_but_off`): another keyspace turned it on
    after this one opened the store, and this one's write would go without it
    (a change log would miss it, counts or deadlines would be left wrong), so
    it writes nothing. Cost: one point read."""
    off = features_recorded_but_off(view, store, scheme, url)
    if off:
        names = " and ".join(off)
        raise SchemeMismatch(
            f"the store at {url!r} keeps {names} since another keyspace turned "
            f"{'them' if len(off) > 1 else 'it'} on after this one opened the store; this keyspace does "
            f"not run {names} on its writes (a change log would miss them, counts or deadlines would be "
            "left wrong), so they are refused and nothing was written: open the store again (every "
            "opener then runs what the store records)"
        )
