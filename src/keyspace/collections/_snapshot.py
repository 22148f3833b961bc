"""``SnapshotMap`` and ``SnapshotItem``: values with their history by height."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator
from typing import Any

from ..codecs import Codec
from ..errors import DecodeError, InvalidArgument, InvalidKey, InvalidName, show_bytes
from ..scope import Scope
from ._base import Collection, owns_transaction
from ._keys import KeySpec, SpecLike
from ._layouts import Layout, Namespace
from ._map import Item, Map
from ._namespaces import check_distinct

__all__ = ["SnapshotItem", "SnapshotMap"]

_STRATEGIES = ("every_block", "never", "selected")
_STRATEGY_NAMES = {"EveryBlock": "every_block", "Never": "never", "Selected": "selected"}
"""cw-storage-plus's ``Strategy`` variant names, taken as the strategies they name."""
_U64 = KeySpec(("u64",))


def _check_height(height: Any, what: str, kind: str = "map") -> None:
    """Raise :class:`InvalidArgument` when ``height`` is missing and
    :class:`~keyspace.errors.InvalidKey` when it is no u64."""
    if height is None:
        raise InvalidArgument(
            f"a snapshot {kind} writes at a height: pass height= (an int from 0 to 2**64-1){what}"
        )
    _U64.elements((height,))


def _strategy(strategy: str) -> str:
    name = _STRATEGY_NAMES.get(strategy, strategy) if type(strategy) is str else strategy
    if name not in _STRATEGIES:
        raise InvalidName(
            f"unknown snapshot strategy {strategy!r}; supported: {', '.join(_STRATEGIES)} "
            f"(or cw-storage-plus's {', '.join(_STRATEGY_NAMES)})"
        )
    return str(name)


class _History:
    """The changelog (``key elements…, height`` -> ``{"old": value or null}``, as
    cw-storage-plus writes it; a value that has no JSON form, such as the bytes
    of a ``value="bytes"`` collection, or whose JSON form reads back as another
    value (a custom codec's tuple, dict with int keys, int or str subclass), as
    ``{"old_bytes": its stored bytes in base64}``, which the value codec
    decodes) and the checkpoints (``height`` -> count) of a snapshot
    collection."""

    def __init__(
        self, owner: Collection, changelog: Map, checkpoints: Map, codec: Codec, strategy: str
    ) -> None:
        self.owner = owner
        self.strategy = strategy
        self.changelog = changelog
        self.checkpoints = checkpoints
        self.codec = codec

    def record(self, base: Scope, elements: tuple[Any, ...], old_raw: bytes | None, height: int) -> None:
        """Write the change set of ``elements`` at ``height`` unless there is one."""
        log = self.changelog
        ns = log._ns
        scope = ns.scope(base)
        key = ns.key((*elements, height))
        if key in scope:
            return
        old = None if old_raw is None else self.codec.decode(old_raw)
        try:
            entry = log.codec.encode({"old": old})
            if type(old) not in _JSON_EXACT and not _same(log.codec.decode(entry)["old"], old):
                raise InvalidKey("its JSON form reads back as another value")
        except InvalidKey:  # no exact JSON form: the stored bytes themselves, as a JSON string
            assert old_raw is not None  # None has one
            entry = log.codec.encode({"old_bytes": base64.b64encode(old_raw).decode()})
        scope[key] = entry

    def check_key(self, base: Scope, elements: tuple[Any, ...], height: int) -> None:
        """Raise what the changelog's scope raises for the key of the change set
        of ``elements`` at ``height`` (:class:`~keyspace.errors.KeyTooLarge`),
        writing nothing: a caller that writes before :meth:`record` checks
        first, so that a refused change set leaves none of its writes behind."""
        ns = self.changelog._ns
        ns.scope(base).check_key(ns.key((*elements, height)))

    def should_record(self, base: Scope, elements: tuple[Any, ...]) -> bool:
        """Whether a change of ``elements`` now writes a change set
        (cw-storage-plus's ``should_checkpoint``): always under
        ``"every_block"``, never under ``"never"``; under ``"selected"`` when a
        checkpoint exists and ``elements`` has no change set at or after the
        latest one (two short scans in ``base``'s view)."""
        if self.strategy != "selected":
            return self.strategy == "every_block"
        cps = self.checkpoints._ns
        latest = next(cps.scan(cps.scope(base), (), None, None, True, False, True, 1), None)
        if latest is None:
            return False
        (height,) = cps.elements(latest[0])
        log = self.changelog._ns
        since = log.scan(log.scope(base), elements, (height,), None, True, False, False, 1)
        return next(since, None) is None

    def assert_checkpointed(self, height: int) -> None:
        """:class:`InvalidArgument` when the history cannot answer for
        ``height`` (cw-storage-plus: "checkpoint not found"): always under
        ``"never"``, under ``"selected"`` when no checkpoint is at ``height``."""
        if self.strategy == "every_block":
            return
        if self.strategy == "never":
            raise InvalidArgument(
                f"{self.owner!r} keeps no history (strategy 'never'): no value at height {height}"
            )
        if not self.checkpoints.has(height):
            raise InvalidArgument(
                f"{self.owner!r} keeps history at its checkpoints only (strategy 'selected'), "
                f"and height {height} has none: no value at that height"
            )

    def change_checkpoint(self, base: Scope, height: int, step: int) -> None:
        """Add one to (``step`` 1) or take one from (``step`` -1) the count of
        checkpoints at ``height``, removing it at zero, in ``base``'s view."""
        cps = self.checkpoints
        scope, key = cps._ns.scope(base), cps._ns.key((height,))
        raw = scope.get(key)
        count = (0 if raw is None else int(cps.codec.decode(raw))) + step
        if count <= 0:
            scope.discard(key)
        else:
            scope[key] = cps.codec.encode(count)

    def at_height(self, elements: tuple[Any, ...], height: int) -> tuple[bool, Any]:
        """``(True, old value)`` from the first change set at or after ``height``,
        else ``(False, None)`` (the current value is the answer).
        :class:`~keyspace.errors.InvalidKey` when ``height`` is no u64;
        :class:`InvalidArgument` when the strategy kept no history for
        ``height`` (see :meth:`assert_checkpointed`)."""
        (height,) = _U64.elements((height,))
        self.assert_checkpointed(height)
        log = self.changelog
        it = log._ns.scan(log._scope(), elements, (height,), None, True, False, False, 1)
        for _, raw in it:
            return True, self.old_value(log.codec.decode(raw))
        return False, None

    def old_value(self, entry: Any) -> Any:
        """The old value a decoded change set holds: ``entry["old"]``, or the
        value whose stored bytes ``entry["old_bytes"]`` keeps (a value without a
        JSON form), decoded by the collection's codec. Every reader of the
        changelog goes through here."""
        if type(entry) is dict and "old_bytes" in entry:
            return self.codec.decode(_stored_bytes(entry["old_bytes"], entry))
        return entry.get("old")


_JSON_EXACT = (type(None), bool, int, float, str)
"""Types whose JSON form reads back as an equal value of the same type."""


def _same(back: Any, value: Any) -> bool:
    """Whether ``back`` (a value read back from its JSON form) is ``value``, types
    included, all the way down: a codec's tuple reads back as a list, its int
    dict keys as str, its ``IntEnum`` as an int, and such a value's history
    keeps its stored bytes instead. Cost: O(size of the value)."""
    if type(back) is not type(value):
        return False
    if type(value) is list:
        return len(back) == len(value) and all(map(_same, back, value))
    if type(value) is dict:
        return back.keys() == value.keys() and all(_same(back[k], v) for k, v in value.items())
    return bool(back == value)


def _stored_bytes(text: Any, entry: Any) -> bytes:
    """The stored bytes a changelog entry ``entry`` keeps as base64 ``text``;
    :class:`DecodeError` for anything else."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise DecodeError(f"changelog entry {show_bytes(entry)} has no base64 'old_bytes'") from None


class _Snapshotted(Collection):
    """The history half of a snapshot collection: its strategy and its
    changelog and checkpoints maps (rebuilt by ``using``)."""

    history: _History
    codec: Codec
    namespace: str | bytes

    def _keep_history(self, strategy: str, checkpoints: str | bytes, changelog: str | bytes) -> None:
        own = self._roles()  # the map's own first (an item has none), then its history, then indexes
        roles = [*own[:1], ("the checkpoints map", checkpoints), ("the changelog", changelog), *own[1:]]
        check_distinct(f"{type(self).__name__} {self.namespace!r}", roles)
        self.strategy = _strategy(strategy)
        self._changelog_ns = changelog
        self._checkpoints_ns = checkpoints
        self._rebind()

    @property
    def changelog(self) -> Map:
        """The changelog map (keys ``(*key, height)``)."""
        return self.history.changelog

    def _log_key(self) -> SpecLike:
        """The key spec of the changelog: the collection's key elements, then the height."""
        raise NotImplementedError

    @property
    def checkpoints(self) -> Map:
        """The checkpoints map (``height`` -> count)."""
        return self.history.checkpoints

    @owns_transaction
    def add_checkpoint(self, height: int) -> None:
        """Count one more checkpoint at ``height`` (``add_checkpoint``): under
        ``"selected"`` the changes after it keep their history and heights with
        a checkpoint can be read back. Atomic; two point operations."""
        _check_height(height, "", "checkpoint")
        with self._atomic() as base:
            self.history.change_checkpoint(base, height, 1)

    @owns_transaction
    def remove_checkpoint(self, height: int) -> None:
        """Count one checkpoint less at ``height``, forgetting the height at zero
        (``remove_checkpoint``; no error when there is none). Atomic."""
        _check_height(height, "", "checkpoint")
        with self._atomic() as base:
            self.history.change_checkpoint(base, height, -1)

    def assert_checkpointed(self, height: int) -> None:
        """:class:`InvalidArgument` unless the history can answer for ``height``
        (always under ``"every_block"``; at a checkpoint under ``"selected"``;
        never under ``"never"``)."""
        (height,) = _U64.elements((height,))
        self.history.assert_checkpointed(height)

    def _rebind(self) -> None:
        log = Map(self._base, self._changelog_ns, key=self._log_key(), layout=self.layout)
        cps = Map(self._base, self._checkpoints_ns, key="u64", layout=self.layout)
        log._base = cps._base = self._base
        self.history = _History(self, log, cps, self.codec, self.strategy)


class _SnapshottedMap(_Snapshotted, Map):
    """What a snapshot map (:class:`SnapshotMap`, and an
    :class:`~keyspace.collections.IndexedSnapshotMap`) adds to its map: the
    changelog's keys, its history in ``clear`` and in a removed key, and the
    reads at a height."""

    def _log_key(self) -> SpecLike:
        return (self.spec + KeySpec("u64")).types

    def _namespaces(self) -> tuple[Namespace, ...]:
        return (*super()._namespaces(), self.changelog._ns, self.checkpoints._ns)

    def _drop(self, base: Scope, elements: tuple[Any, ...]) -> None:
        """The key, whatever the map keeps for it, and every change set of it (a
        cleared key has no history)."""
        super()._drop(base, elements)
        self.changelog._ns.clear_prefix(base, elements)

    def __delitem__(self, key: Any) -> None:
        """Refused (:class:`InvalidArgument`, nothing removed): a removal happens
        at a height; use ``remove(key, height)``."""
        raise InvalidArgument(f"a snapshot map removes at a height: use remove({key!r}, height=...)")

    def may_load_at_height(self, key: Any, height: int, default: Any = None) -> Any:
        """The value of ``key`` at the start of ``height`` (``default`` if it had
        none); :class:`InvalidArgument` where the strategy kept no history for
        ``height``. Cost: one short changelog scan, then maybe one point read."""
        elements = self.spec.elements(key)
        found, old = self.history.at_height(elements, height)
        if found:
            return default if old is None else old
        return self.may_load(key, default)

    def changes(self, key: Any) -> Iterator[tuple[int, Any]]:
        """``(height, old value)`` of every change set recorded for ``key``, in
        height order; an old value is what :meth:`may_load_at_height` reads for
        that height (``None`` where there was none), whatever the value codec."""
        old_value = self.history.old_value
        for height, change in self.changelog.prefix(self.spec.elements(key)).items():
            yield height, old_value(change)


class SnapshotMap(_SnapshottedMap):
    """A :class:`Map` (the primary, in ``namespace``) that also records, per key,
    the value it had before each height at which it changed: the changelog map
    (namespace ``changelog``, keys ``(*key, u64 height)``, values
    ``{"old": value or null}``) and the checkpoints map (namespace
    ``checkpoints``, ``u64`` height -> count), as cw-storage-plus's
    ``SnapshotMap``. ``save(key, value, height)``, ``update(key, fn, height)``
    and ``remove(key, height)`` write the primary and the change set the
    strategy asks for, atomically (``m[k] = v`` and ``del m[k]``, which have no
    height, raise :class:`InvalidArgument`); ``may_load_at_height(key, height)``
    reads the value as it was at the start of ``height``. Strategies
    (cw-storage-plus's ``EveryBlock``, ``Never`` and ``Selected`` names are
    taken too): ``"every_block"`` records every change; ``"never"`` records
    nothing, and ``may_load_at_height`` raises :class:`InvalidArgument`;
    ``"selected"`` records a key's first change after the latest checkpoint
    (:meth:`add_checkpoint`, :meth:`remove_checkpoint`) and answers
    ``may_load_at_height`` at checkpointed heights only
    (:class:`InvalidArgument` elsewhere). Every ``Map`` read works for any
    strategy.
    """

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        checkpoints: str | bytes,
        changelog: str | bytes,
        *,
        key: SpecLike,
        value: str | Codec | None = None,
        strategy: str = "every_block",
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, namespace, key=key, value=value, layout=layout)
        self._keep_history(strategy, checkpoints, changelog)

    def save(self, key: Any, value: Any, height: int | None = None) -> None:
        """Store ``value`` at ``key`` as of ``height`` (the change set is written
        once per key and height)."""
        self._change(key, self.codec.encode(value), height)

    def remove(self, key: Any, height: int | None = None) -> None:
        """Remove ``key`` as of ``height``."""
        self._change(key, None, height)

    @owns_transaction
    def update(self, key: Any, fn: Callable[[Any], Any], height: int | None = None) -> Any:
        """Store and return ``fn(current value or None)`` at ``key`` as of
        ``height``, with its change set, atomically."""
        elements = self.spec.elements(key)
        _check_height(height, f" with key {key!r}")
        with self._atomic() as base:
            new, raw = self._updated(fn, self._ns.scope(base).get(self._ns.key(elements)))
            self._change_in(base, elements, raw, height)
        return new

    @owns_transaction
    def _change(self, key: Any, raw: bytes | None, height: int | None) -> None:
        elements = self.spec.elements(key)
        _check_height(height, f" with key {key!r}")
        with self._atomic() as base:
            self._change_in(base, elements, raw, height)

    def _change_in(self, base: Scope, elements: tuple[Any, ...], raw: bytes | None, height: Any) -> None:
        """Write (``raw``) or remove (``None``) the value of ``elements`` at
        ``height`` with its change set, in ``base``'s transaction."""
        scope = self._ns.scope(base)
        stored = self._ns.key(elements)
        if self.history.should_record(base, elements):
            scope.check_key(stored)
            self.history.record(base, elements, scope.get(stored), height)
        if raw is None:
            scope.discard(stored)
        else:
            scope[stored] = raw


class SnapshotItem(_Snapshotted, Item):
    """An :class:`Item` with the history of its value by height, as
    cw-storage-plus's ``SnapshotItem``: the changelog map (``u64`` height ->
    ``{"old": value or null}``) and the checkpoints map."""

    def __init__(
        self,
        scope: Scope,
        namespace: str | bytes,
        checkpoints: str | bytes,
        changelog: str | bytes,
        *,
        value: str | Codec | None = None,
        strategy: str = "every_block",
        layout: Layout | None = None,
    ) -> None:
        super().__init__(scope, namespace, value=value, layout=layout)
        self._keep_history(strategy, checkpoints, changelog)

    def _log_key(self) -> SpecLike:
        return "u64"

    def save(self, value: Any, height: int | None = None) -> None:
        """Store ``value`` as of ``height``."""
        self._change(self.codec.encode(value), height)

    def remove(self, height: int | None = None) -> None:
        """Remove the value as of ``height``."""
        self._change(None, height)

    @owns_transaction
    def update(self, fn: Callable[[Any], Any], height: int | None = None) -> Any:
        """Store and return ``fn(current value or None)`` as of ``height``, with
        its change set, atomically."""
        _check_height(height, "", "item")
        with self._atomic() as base:
            new, raw = self._updated(fn, base.get(self.key))
            self._change_in(base, raw, height)
        return new

    @owns_transaction
    def _change(self, raw: bytes | None, height: int | None) -> None:
        _check_height(height, "", "item")
        with self._atomic() as base:
            self._change_in(base, raw, height)

    def _change_in(self, base: Scope, raw: bytes | None, height: Any) -> None:
        """Write (``raw``) or remove (``None``) the value at ``height`` with its
        change set, in ``base``'s transaction."""
        if self.history.should_record(base, ()):
            base.check_key(self.key)
            self.history.record(base, (), base.get(self.key), height)
        if raw is None:
            base.discard(self.key)
        else:
            base[self.key] = raw

    def may_load_at_height(self, height: int, default: Any = None) -> Any:
        """The value at the start of ``height`` (``default`` if there was none)."""
        found, old = self.history.at_height((), height)
        if found:
            return default if old is None else old
        return self.may_load(default)
