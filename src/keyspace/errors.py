"""The errors keyspace raises.

Every error the library raises on purpose is a :class:`KeyspaceError`::

    KeyspaceError
    ├── InvalidName          a scope name or key the scheme cannot represent
    │   ├── InvalidKey       a key of the wrong type for the scope's key codec
    │   │   └── IncompleteVersionstamp  a versionstamp without its transaction
    │   │                    version, in a tuple that must be complete to pack
    │   └── ReservedKey      a key whose stored key would lie where the keyspace
    │                        keeps its records (scheme record, layout, registries)
    ├── InvalidArgument      an argument a call does not take (an option of the
    │                        wrong type or value; names the argument and value)
    ├── KeyTooLarge          a stored key over the engine's or the format's limit
    ├── DecodeError          bytes that are not a valid encoding (names the offset)
    ├── SchemeMismatch       reopening a keyspace with another scheme than recorded
    ├── UnreadableRecord     a scheme record in the store that cannot be read
    ├── HashCollision        two scope names with the same 32-bit hash (ScopeHash)
    ├── LayoutError          a scope that would hold keys and child scopes where the
    │                        scheme cannot tell them apart
    ├── TransactionTooLarge  an atomic batch over the engine's operation limit
    ├── UniqueViolation      a record whose unique index key another record holds
    ├── CollectionFull       a push onto a Deque that holds 2**32 - 1 items
    ├── QuotaExceeded        a write that would take a scope or an ancestor past its
    │                        quota (names the scope, the limit, the would-be size)
    ├── AccountingUnavailable  accounting asked of a keyspace that does not keep it
    │                        (off, or a scheme that cannot tell a key's scope)
    ├── StoreError           an engine failure, translated by the store adapter
    │   ├── StoreClosed      an operation on a closed store or keyspace
    │   ├── TransactionConflict  a transaction whose reads another writer may
    │   │                    have changed before its commit (etcd; LMDB growing
    │   │                    a small map); nothing written: run it again
    │   ├── EtcdUnavailable  an etcd cluster that gave no answer within the budget
    │   │   └── CommitOutcomeUnknown  a commit that may or may not have been applied
    │   ├── AccessDenied     the server refused an operation the credentials do
    │   │                    not permit (etcd roles); nothing was changed
    │   ├── AuthenticationFailed  wrong user, password or certificate at open
    │   ├── WatchCompacted   a watch asked to start at a revision compacted away
    │   │   └── FeedBehind   a feed consumer whose next entries the change log
    │   │                    trimmed away (its retention): never a silent gap
    │   ├── FeedRemoved      a read or ack of a feed removed since it was opened
    │   │                    (``keyspace feed rm``); nothing written
    │   └── FeedMoved        an ack of a feed another consumer acknowledged since
    │                        this one read its cursor; nothing written
    ├── WatchUnsupported     ``watch`` on an engine that cannot see changes
    ├── DirectoryError       a directory operation the directory tree refuses
    │   ├── DirectoryNotFound    no directory at the path (or its parent)
    │   ├── DirectoryExists      a directory at the path already (create, move)
    │   ├── LayerMismatch        a directory opened with another layer than its own
    │   ├── StaleDirectory       a handle of a directory removed since it was opened
    │   ├── PrefixInUse          a prefix that meets another directory's or the
    │   │                        keyspace's keys (create with a manual prefix)
    │   └── DirectoryVersion     a tree written by a newer directory layer
    └── NotEntered           a transaction or snapshot used without ``with``

Each message says what was wrong, the offending value and the limit. Bad input is
checked before anything is written, so an error never leaves a store half-changed.
"""

from __future__ import annotations

from typing import Any

from ._bytes import buffer_bytes

__all__ = [
    "AccessDenied",
    "AccountingUnavailable",
    "AuthenticationFailed",
    "CollectionFull",
    "CommitOutcomeUnknown",
    "DecodeError",
    "DirectoryError",
    "DirectoryExists",
    "DirectoryNotFound",
    "DirectoryVersion",
    "EtcdUnavailable",
    "FeedBehind",
    "FeedMoved",
    "FeedRemoved",
    "HashCollision",
    "IncompleteVersionstamp",
    "InvalidArgument",
    "InvalidKey",
    "InvalidName",
    "KeyTooLarge",
    "KeyspaceError",
    "LayerMismatch",
    "LayoutError",
    "NotEntered",
    "PrefixInUse",
    "QuotaExceeded",
    "ReservedKey",
    "SchemeMismatch",
    "StaleDirectory",
    "StoreClosed",
    "StoreError",
    "TransactionConflict",
    "TransactionTooLarge",
    "UniqueViolation",
    "UnreadableRecord",
    "WatchCompacted",
    "WatchUnsupported",
    "show_bytes",
    "show_error",
]

_SHOW_LIMIT = 48


def show_bytes(value: object, limit: int = _SHOW_LIMIT) -> str:
    """Render a value for an error message, shortening it, whatever the value:
    never recurses, and raises nothing of its own (what the value's own methods
    raise is caught; only ``KeyboardInterrupt`` and the like pass).

    ``show_bytes(b"a" * 100)`` gives ``b'aaaa…' (100 bytes)``: messages stay one
    readable line however large the offending value is. A bytes-like value
    (``bytearray``, ``memoryview``, a ``bytes`` subclass) is shown as the bytes it
    holds, read through the buffer protocol (a released ``memoryview`` as
    ``<released memoryview>``). Any other value is shown as its ``repr``, cut to
    about ``limit`` characters with its full length, ``… (N characters)``; tuples,
    lists, dicts, sets and frozensets (the exact types) are drawn without recursion
    (a container inside itself as ``[...]``), so one nested deeper than the
    recursion limit is shown too; an int of more than about ``limit`` digits
    as the first hex digits and its size in bits (a decimal ``repr`` of it may
    be refused by Python's int-to-str limit, and costs time quadratic in its
    length); an object whose own ``repr`` raises (or recurses too deep) as
    ``<type object>``. Cost: linear in the size of the value (one ``repr`` per
    element that is not one of those containers).
    """
    keep = limit + 16
    kind = type(value)
    try:
        if kind is bytes or issubclass(kind, (bytes, bytearray, memoryview)):
            raw = value if kind is bytes else buffer_bytes(value)
            if raw is None:
                return f"<released {kind.__name__}>"
            assert isinstance(raw, bytes)
            if len(raw) <= limit:
                return repr(raw)
            return f"{raw[:limit]!r}… ({len(raw)} bytes)"
        text, size = _repr_head(value, keep)
    except Exception:  # a container changed while it was drawn (by an element's repr)
        return f"<{kind.__name__} object>"
    if size <= keep:
        return text
    return f"{text[:limit]}… ({size} characters)"


def show_error(exc: BaseException, limit: int = 2 * _SHOW_LIMIT) -> str:
    """``"Type: message"`` of an exception raised by another object's code (a
    value's own method, a codec's), for a message that names it as the cause, cut
    to about ``limit`` characters; just ``"Type"`` when the exception has no
    message or its ``str`` raises. Never raises."""
    name = type(exc).__name__
    try:
        text = str.__str__(str(exc))  # an exact str, whatever __str__ returned
    except Exception:
        return name
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text)} characters)"
    return f"{name}: {text}" if text else name


def bytes_argument(value: object, what: str) -> bytes:
    """Return ``value``, an argument that must be bytes (``what`` names it, e.g.
    ``"AsciiHex.decode() stored"``), as exact ``bytes``: a bytes-like value as
    the bytes it holds (:func:`keyspace._bytes.buffer_bytes`). Raises
    :class:`~keyspace.errors.InvalidArgument` naming the argument, the type and
    the value (cut short) for anything else, a released ``memoryview``
    included. Called where a decoder finds an argument that is not exactly
    ``bytes``, so that bytes cost nothing more."""
    if type(value) is bytes:
        return value
    raw = buffer_bytes(value) if issubclass(type(value), (bytes, bytearray, memoryview)) else None
    if raw is not None:
        return raw
    raise InvalidArgument(f"{what} must be bytes, not {type(value).__name__}: {show_bytes(value)}")


_OPEN: dict[type, str] = {tuple: "(", list: "[", dict: "{", set: "{", frozenset: "frozenset({"}
_CLOSE: dict[type, str] = {tuple: ")", list: "]", dict: "}", set: "}", frozenset: "})"}
_EMPTY: dict[type, str] = {set: "set()", frozenset: "frozenset()"}
_INT_DIGIT_BITS = 10 / 3  # a little more than the bits of one decimal digit (3.32)


def _repr_head(value: Any, keep: int) -> tuple[str, int]:
    """The first ``keep`` characters (at least; all when there are no more) of the
    ``repr`` of ``value`` as :func:`show_bytes` draws it, and its length, with
    nested tuples, lists, dicts, sets and frozensets (exact types) walked on an
    explicit stack rather than by recursion. Cost: one :func:`_atom` per element
    that is not such a container, one small list per container; only the kept
    text is joined."""
    kind = type(value)
    if kind not in _OPEN:
        text = _atom(value, keep)
        return text, len(text)
    if not value and kind in _EMPTY:
        return _EMPTY[kind], len(_EMPTY[kind])
    parts = [_OPEN[kind]]
    size = len(parts[0])
    # one frame per open container: its iterator (of items, for a dict), its type,
    # the elements drawn so far, its id, and a dict value still to draw after its key
    stack: list[list[Any]] = [[iter(value.items() if kind is dict else value), kind, 0, id(value), ()]]
    open_ids = {id(value)}  # the containers being drawn: one met again inside itself is shown as [...]
    while stack:
        frame = stack[-1]
        if frame[4]:  # the value of the dict item whose key was drawn last
            x = frame[4][0]
            frame[4] = ()
            lead = ": "
        else:
            x = next(frame[0], stack)  # the stack itself: no element is it
            if x is stack:
                stack.pop()
                open_ids.discard(frame[3])
                token = ",)" if frame[1] is tuple and frame[2] == 1 else _CLOSE[frame[1]]
                if size <= keep:
                    parts.append(token)
                size += len(token)
                continue
            lead = ", " if frame[2] else ""
            frame[2] += 1
            if frame[1] is dict:
                x, value_next = x
                frame[4] = (value_next,)
        kind = type(x)
        if kind in _OPEN:
            if id(x) in open_ids:
                token = f"{lead}{_OPEN[kind]}...{_CLOSE[kind]}"
            elif not x and kind in _EMPTY:
                token = lead + _EMPTY[kind]
            else:
                stack.append([iter(x.items() if kind is dict else x), kind, 0, id(x), ()])
                open_ids.add(id(x))
                token = lead + _OPEN[kind]
        else:
            token = lead + _atom(x, keep)
        if size <= keep:
            parts.append(token)
        size += len(token)
    return "".join(parts), size


def _atom(x: object, keep: int) -> str:
    """The ``repr`` of ``x``, a value :func:`_repr_head` does not walk, as an exact
    ``str``: an int too long to show in full as its leading hex digits and size,
    and ``<type object>`` when its own ``repr`` raises (or recurses too deep)."""
    kind = type(x)
    if kind is str:
        return repr(x)
    if issubclass(kind, int) and kind is not bool:
        bits = int.bit_length(x)  # type: ignore[arg-type]  # an int (subclass): no method of its own runs
        if bits > keep * _INT_DIGIT_BITS:
            n = int.__int__(x)  # type: ignore[arg-type]
            return f"{'-' if n < 0 else ''}0x{abs(n) >> (bits - 64):x}… (an int of {bits} bits)"
    try:
        return str.__str__(repr(x))  # an exact str, whatever __repr__ returned
    except Exception:
        return f"<{kind.__name__} object>"


class KeyspaceError(Exception):
    """Base class of every error raised by keyspace on purpose."""


class InvalidName(KeyspaceError, ValueError):
    """A scope name (or key) the scheme cannot represent, e.g. a sublevel name with
    a byte outside the allowed range, an empty ScopeHash name, or a str that is
    not valid UTF-8."""


class InvalidKey(InvalidName, TypeError):
    """A key of the wrong type or shape for the scope's key codec (e.g. a str key in
    a bytes scope, an int outside the 64-bit range of the ``int`` codec, a tuple
    nested deeper than :data:`keyspace.tuples.MAX_NESTING`)."""


class IncompleteVersionstamp(InvalidKey):
    """A tuple holding an incomplete :class:`keyspace.tuples.Versionstamp` (one
    whose transaction version is not known yet) given where the packed bytes must
    be final, e.g. to :func:`keyspace.tuples.pack` or as a key: only a commit can
    fill in those 10 bytes. The message names the versionstamp."""


class ReservedKey(InvalidName):
    """A key whose stored key would lie in a range the keyspace reserves for its
    records (the scheme record and footprint registry under ``ff "keyspace"``, the
    recorded LengthPrefixed layout), or the store keeps for its own use (etcd's
    revision probe key, ``00`` or the empty key under a key prefix, which every
    user granted access may read): possible only in scopes whose keys may be any
    bytes (the root of LengthPrefixed, Sublevel, Naive; on etcd, an AsciiHex scope
    ``("",)`` too). Refused on every read and write; such keys are never part of a
    scope's scans."""


class InvalidArgument(KeyspaceError, ValueError, TypeError):
    """An argument a call does not take: an option of the wrong type or value (a
    ``limit`` that is not an int, ``prefix`` together with ``start``, an unknown
    codec name or scoped-heed API). The message names the argument and the value.
    A ``ValueError`` and a ``TypeError``, as Python's own argument errors are one
    or the other."""


class KeyTooLarge(KeyspaceError, ValueError):
    """A key or component over a limit: a CosmWasm component over 65535 bytes, or a
    stored key over the engine's maximum key size."""


class DecodeError(KeyspaceError, ValueError):
    """Bytes that are not a valid encoding of the format being decoded.

    ``offset`` is the byte offset where decoding failed, when known.
    """

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


class SchemeMismatch(KeyspaceError):
    """A keyspace reopened with another scheme than the one recorded in its store."""


class UnreadableRecord(KeyspaceError):
    """A scheme record in the store that cannot be read (garbage, truncated, empty,
    another format version, parameters the scheme does not take). The message
    names the key; the record is never passed over nor overwritten."""


class HashCollision(KeyspaceError):
    """Two distinct scope names share a 32-bit hash (ScopeHash); writing the second
    would mix their keys."""


class LayoutError(KeyspaceError):
    """A scope would hold both its own keys and child scopes in a scheme that cannot
    tell them apart (LengthPrefixed, Naive)."""


class TransactionTooLarge(KeyspaceError):
    """An atomic batch with more operations (or bytes) than the engine accepts in one
    transaction. keyspace never splits an atomic batch silently."""


class NotEntered(KeyspaceError, AttributeError):
    """A transaction or snapshot handle used without entering it: ``ks.transaction()``
    and ``ks.snapshot()`` (and their ``keyspace.aio`` forms) give context managers,
    whose scopes exist only inside ``with`` (``async with``). The message names
    the attribute asked for and says to use ``with``. An ``AttributeError``, so
    ``hasattr`` stays false as before."""


class UniqueViolation(KeyspaceError):
    """Saving a record of an ``IndexedMap`` whose unique index key is already held
    by another record. Nothing of the save is written."""


class CollectionFull(KeyspaceError, OverflowError):
    """A push onto a ``Deque`` that already holds ``2**32 - 1`` items, the most its
    u32 positions can tell apart (as cw-storage-plus's). Nothing is written."""


class QuotaExceeded(KeyspaceError):
    """A write that would take a scope, or one of its ancestors, past the quota set
    on it (``ks.set_quota``): more keys or more bytes (stored key + value) in its
    subtree than allowed. The message names the scope, the limit and the size the
    write would have made; nothing of the write (nor of the transaction it ends)
    is written. ``path``, ``limit``, ``size`` and ``what`` (``"keys"`` or
    ``"bytes"``) give the same facts."""

    def __init__(
        self, message: str, path: tuple[Any, ...] = (), what: str = "", limit: int = 0, size: int = 0
    ) -> None:
        super().__init__(message)
        self.path = path
        self.what = what
        self.limit = limit
        self.size = size


class AccountingUnavailable(KeyspaceError):
    """Per-scope counts or quotas asked of a keyspace that does not keep them:
    accounting is off (open with ``accounting=True``, or run ``keyspace
    accounting enable``), or its scheme cannot tell which scope a stored key
    belongs to (LengthPrefixed, ScopeHash, Naive), so it refuses accounting."""


class StoreError(KeyspaceError):
    """A failure of the underlying engine, translated by its adapter. The engine's
    own exception is chained as ``__cause__``."""


class StoreClosed(StoreError):
    """An operation on a store or keyspace that has been closed."""


class AccessDenied(StoreError):
    """The server refused an operation that the credentials in use do not permit
    (an etcd role without permission on the keys). Nothing was changed."""


class AuthenticationFailed(StoreError):
    """The server refused the credentials given at open: an unknown user, a wrong
    password, or a certificate it does not accept (or that does not match it).
    Raised once, at open; never retried."""


class WatchCompacted(StoreError):
    """A watch asked for changes from a revision the store has compacted away.

    ``revision`` is the one asked for, ``compact_revision`` the oldest still kept."""

    def __init__(self, message: str, revision: int, compact_revision: int) -> None:
        super().__init__(message)
        self.revision = revision
        self.compact_revision = compact_revision


class FeedBehind(WatchCompacted):
    """A durable feed consumer (``ks.feed``) whose next change the change log no
    longer holds: the log's retention trimmed it before the consumer acknowledged
    it. ``revision`` is the consumer's next one, ``compact_revision`` the oldest
    still kept. Remove the feed (``keyspace feed rm``) and make it again to go on
    from now."""


class FeedRemoved(StoreError):
    """A read or an acknowledgement of a durable feed (``ks.feed``) that was
    removed (``keyspace feed rm``, :func:`~keyspace._feeds.remove_feed`) since the
    consumer opened it: nothing is written, so the removal stands. Open the
    feed again to make it anew from now."""


class FeedMoved(StoreError):
    """An acknowledgement of a durable feed (``ks.feed``) whose cursor in the store
    is no longer the one this consumer read or acknowledged last: another
    consumer of the same feed acknowledged meanwhile (a feed is one consumer's:
    two reading it each get every change and would move each other's cursor), or
    an ``ack(tx=...)`` of this one did not commit. Nothing is written. Open the
    feed again to go on after its recorded cursor."""


class WatchUnsupported(KeyspaceError):
    """``watch`` on a store whose engine cannot report changes (its
    ``capabilities.watch`` is ``None``). Raised at once, never an empty stream."""


class TransactionConflict(StoreError):
    """A transaction's writes may rest on reads another writer has changed since:
    its commit found that a key or range it read had changed since it read it (an
    engine that guards a transaction's reads instead of locking: etcd), or, on
    LMDB, the transaction had to end its engine transaction to grow a full map
    (one that began with less than ``FAST_HEADROOM`` free: a small ``map_size``),
    which released the writer lock, and another process committed meanwhile.
    Nothing was written; running the whole transaction again is safe."""


class EtcdUnavailable(StoreError):
    """The etcd cluster did not answer within the retry budget (members down, no
    quorum, an election): gRPC ``UNAVAILABLE``, ``DEADLINE_EXCEEDED``, or etcd's
    "context deadline exceeded" / "request timed out". For a write the outcome is
    unknown: it may have been applied."""


class CommitOutcomeUnknown(EtcdUnavailable):
    """A transaction commit that met an unavailable cluster, and re-reading the
    written keys within the retry budget could not establish whether it was
    applied. Read the keys again once the cluster is back before retrying."""


class DirectoryError(KeyspaceError):
    """A directory operation the directory tree refuses (see
    :mod:`keyspace.directory`); nothing is changed. Also the error of a path that
    is no tuple of str names, of a move into the directory's own subtree, of a
    manual prefix where the keyspace allows none, and of keys used at the root of
    a partition."""


class DirectoryNotFound(DirectoryError, KeyError):
    """No directory at the path named (``open``, ``move``, ``remove``, ``list``),
    or no parent for the destination of a ``move``."""

    def __str__(self) -> str:  # KeyError quotes its argument; the message is a sentence
        return str(self.args[0]) if self.args else ""


class DirectoryExists(DirectoryError):
    """A directory at the path already: ``create`` of an existing path, ``move``
    onto an existing destination."""


class LayerMismatch(DirectoryError):
    """A directory opened with a ``layer`` other than the one it was created with."""


class StaleDirectory(DirectoryError):
    """An operation through a directory handle whose directory was removed since
    the handle was made: its prefix no longer belongs to any directory, so
    nothing is read from or written to it."""


class PrefixInUse(DirectoryError):
    """A prefix (given to ``create``, or drawn by the allocator) that meets another
    directory's prefix, the directory nodes, keys already stored, or the keys of
    the keyspace's own scopes and records."""


class DirectoryVersion(DirectoryError):
    """A directory tree whose recorded version is newer than this directory layer
    reads (a major version above 1), or writes (a minor version above 0)."""
