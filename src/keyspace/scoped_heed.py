"""Open a scoped-heed environment in place: the LMDB environment a Rust service
writes with the ``scoped-heed`` crate, read and written from Python.

``keyspace.scoped_heed.open(path, name, api=...)`` returns a :class:`Keyspace` over
the scoped database ``name``: its root scope ``()`` is scoped-heed's default scope,
its one-level scopes ``("tenant1",)`` are the named scopes, each a full
:class:`~keyspace.scope.Scope` (ranges, ``len``, ``clear``, ``drop``, transactions
spanning the default and named scopes). Names are registered in scoped-heed's own
registry database ``__global_scope_metadata`` with the first write of a scope, so
a name whose 32-bit hash another name (written by either side) already holds
raises :class:`~keyspace.errors.HashCollision`; nothing else is written. So does
any name of a hash the database holds keys under with no registry entry (one that
``unregister_scope`` or ``prune_globally_unused_scopes`` removed): nothing says
whose keys they are.

Supported: scoped-heed 0.2.0-alpha.3 and later (``NAME`` / ``NAME_scoped`` /
``__global_scope_metadata``, XXH32 hashes; the reference is 0.2.0-alpha.8), and
0.2.0-alpha.1/2 environments whose default scope is ``NAME_default`` beside the
registry. Refused with :class:`~keyspace.errors.SchemeMismatch`: 0.1.x environments
(``NAME_default``/``NAME_scoped`` without the registry: their scope hashes are
SipHash and no name can be recovered), and any other without the registry.

Layout per ``api`` (the builder call of the Rust side):

=============  ====================================  =============================
api            default scope key / named scope key   value
=============  ====================================  =============================
``raw_bytes``  key / ``u32le(h) u64le(len) key``     as-is (``value`` codec: bytes)
``bytes_keys`` key / ``u32le(h) u64le(len) key``     bincode(V) (default ``Vec<u8>``)
``types``      bincode(K) / ``u32le(h) bincode(K)``  bincode(V) (default ``Vec<u8>``)
=============  ====================================  =============================

``key``/``value`` are the codecs of K and V (:mod:`keyspace.bincode`, e.g.
``key=bincode.U64, value=bincode.STRING`` for ``types::<u64, String>()``).
``unnamed_default=True`` is ``.unnamed_for_default()``: the default scope is the
unnamed database, which also holds LMDB's records of the named databases: they are
no data of the default scope (scoped-heed's own ``iter()`` shows them; keyspace's
reads, ``len`` and ``clear`` leave them out, and writing one raises
:class:`~keyspace.errors.StoreError`). Whether the default scope is there is the
environment's to say (see :func:`open`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from . import bincode
from .catalog import SETTLED, Catalog, GuardAnswer, ReadGuard
from .codecs import BYTES, Codec, native_type, resolve_codec
from .errors import DecodeError, HashCollision, InvalidArgument, SchemeMismatch, StoreError, show_bytes
from .keyspace import Keyspace
from .schemes._base import Key, Path
from .schemes.scoped_heed import APIS, DEFAULT_TAG, NAMED_TAG, REGISTRY_TAG, ScopedHeed
from .stores._base import ReadView, Store, WriteView
from .stores._checked import CheckedReads
from .stores._options import resolve_options
from .stores._readonly import ReadOnlyStore
from .stores._union import PrefixUnion
from .stores.lmdb import LMDBStore
from .stores.lmdb._env import check_room

__all__ = ["REGISTRY_DB", "ScopedHeedKeyspace", "open", "registry_names"]

REGISTRY_DB = "__global_scope_metadata"
"""scoped-heed's environment-wide registry database: ``u32le(hash) -> bincode String``."""

MAX_DBS = 64
"""``max_dbs`` the environment is opened with unless given."""


def registry_names(view: ReadView) -> list[tuple[int, str]]:
    """``(hash, name)`` of every registry entry of a scoped-heed byte space, in
    stored order. Cost: one scan of the registry."""
    lo, hi = ScopedHeed.registry_range
    out: list[tuple[int, str]] = []
    for k, v in view.scan(lo, hi):
        out.append((int.from_bytes(k[1:5], "little"), _registered_name(k, v)))
    return out


def _registered_name(key: bytes, raw: bytes) -> str:
    """The name of the registry entry at ``key`` (``02 u32le(hash)``), checked: a
    value that is no bincode String, or a name with another hash, is a
    :class:`DecodeError` (a corrupt entry is never trusted)."""
    try:
        return ScopedHeed.registry_name(raw, int.from_bytes(key[1:5], "little"))
    except DecodeError as exc:
        raise DecodeError(f"{REGISTRY_DB}: {exc}", exc.offset) from None


def _name_key(path: Path) -> tuple[str, bytes]:
    """A named scope's name and its registry key."""
    name = ScopedHeed.scope_name(path[0])
    return name, ScopedHeed.registry_key(name)


class _Registry(Catalog):
    """The catalog of a scoped-heed keyspace: scoped-heed's registry is the source
    of truth for names; no scheme record, no layout rules. Its entries are not
    for good: scoped-heed removes them (``unregister_scope``,
    ``prune_globally_unused_scopes``), after which another name of the same hash
    may register. So the registry is checked (the name registered again where
    its entry is gone) inside the transaction of every write and delete, as
    scoped-heed itself registers the name with every write; every read of the
    committed store checks it in the state that read reads (:meth:`data_view`);
    inside a transaction, which holds LMDB's write lock, or a snapshot, once
    per scope (:meth:`guard`)."""

    facts_removable = True

    def __init__(self, store: Store, scheme: ScopedHeed) -> None:
        super().__init__(store, scheme, recorded=True)
        self._plain = False  # a named scope's first write registers its name

    def _owner(self, view: ReadView, name: str, key: bytes) -> str | None:
        """The name the registry gives to ``name``'s hash, whose registry key is
        ``key`` (``None``: no entry, and no key stored under the hash), read from
        ``view``. Cost: a point read, and a seek when there is no entry.

        Raises :class:`HashCollision` when there is no entry yet this database
        holds keys under the hash: scoped-heed registers a name with every write,
        so the entry was removed (``unregister_scope``, or
        ``prune_globally_unused_scopes`` given some of the databases only) and
        nothing says which of the names of that hash the keys belong to.

        The committed store answers the entry and the seek apart: a write of the
        name (entry and keys in one transaction) committing between them would
        look like keys with no entry. So keys found with no entry in the
        committed store are looked at again in one snapshot of it, which alone
        decides; no cost while the entry is there or no key is."""
        raw = view.get(key)
        if raw is not None:
            return _registered_name(key, raw)
        lo, hi = self.scheme.own_range((name,))
        found = next(iter(view.scan(lo, hi, limit=1)), None)
        store = self.store
        if found is not None and view is store and store.capabilities.snapshots:
            with store.snapshot() as snapshot:
                return self._owner(snapshot, name, key)
        if found is not None:
            raise HashCollision(
                f"scope name {name!r}: the database holds keys under its xxh32 hash {show_bytes(key[1:])} "
                f"but {REGISTRY_DB} has no entry for that hash, so which name's keys they are is not known "
                "(the entry was removed: unregister_scope, or prune_globally_unused_scopes given only some "
                "of the databases); register the name that owns them again to use this scope"
            )
        return None

    def guard(self, path: Path) -> ReadGuard | None:
        """Before reads of a named scope in a transaction or snapshot:
        :class:`HashCollision` when the registry that view holds gives its hash
        to another name (its keys are that name's), or to none while keys are
        stored under it; checked once per scope (the view's registry does not
        change under it, but for the transaction's own writes, which check it
        themselves). The committed store's reads check the registry in the
        state each one reads (:meth:`data_view`), so nothing is left to do
        before them; a store without snapshots (an async store's plan view) is
        checked before each read, which the asyncio face makes in one snapshot
        with the read (:attr:`~keyspace.catalog.Catalog.facts_removable`)."""
        if not path:
            return None
        name, key = _name_key(path)
        store = self.store
        checked = store.capabilities.snapshots  # its scopes read through CheckedReads

        def read_check(view: ReadView) -> GuardAnswer:
            if view is store:
                if not checked:
                    self._claim(view, name, key)
                return True  # not SETTLED: deletes check the registry again
            return SETTLED if self._claim(view, name, key) else True

        return read_check

    def data_view(self, path: Path, view: ReadView, data: ReadView, tag: bytes) -> ReadView:
        """As :meth:`Catalog.data_view`: a named scope of the committed store reads
        through :class:`CheckedReads`, which checks that the registry gives its
        hash to its name in the state each read reads (a scope held while
        scoped-heed removes its entry and another name of the same hash
        registers never reads that name's keys), and else asks :meth:`_claim`
        in one snapshot. Cost: a point read checks the registry once per state
        of the environment (LMDB's transaction id), a scan or count reads one
        snapshot."""
        store = self.store
        if not path or view is not store or not store.capabilities.snapshots or not isinstance(data, Store):
            return data
        name, key = _name_key(path)

        def recheck(snap: ReadView) -> bool:
            return self._claim(snap, name, key)

        return CheckedReads(store, data, tag, key, bincode.STRING.encode(name), recheck)

    def _path_guard(self, path: Path) -> ReadGuard | None:
        """The registry check a delete of a named scope runs inside its own
        transaction (:meth:`Catalog.destructive`; ``None`` for the default
        scope): :meth:`_claim`, read from the view it is given."""
        if not path:
            return None
        name, key = _name_key(path)

        def check(view: ReadView) -> GuardAnswer:
            # the committed registry may change at any time (scoped-heed removes
            # entries); a transaction's or snapshot's view keeps the entry it holds,
            # while a free hash may be taken by a write of the same transaction
            owned = self._claim(view, name, key)
            return SETTLED if owned and view is not self.store else True

        return check

    def _claim(self, view: ReadView, name: str, key: bytes) -> bool:
        """Whether the registry read from ``view`` gives ``name``'s hash (registry
        key ``key``) to ``name`` (``False``: to none, and no key is stored under
        it); :class:`HashCollision` when it gives it to another name, or to none
        while keys are stored under it (:meth:`_owner`)."""
        other = self._owner(view, name, key)
        if other is not None and other != name:
            raise HashCollision(
                f"scope name {name!r} has the same xxh32 hash {show_bytes(key[1:])} as {other!r}, which "
                f"is registered in {REGISTRY_DB}: its keys are {other!r}'s"
            )
        return other is not None

    def write_ready(self, path: Path) -> bool:
        """As :meth:`Catalog.write_ready` for the default scope. A named scope is
        ready only inside a transaction that has checked it already (the
        transaction holds LMDB's write lock: the registry cannot change under
        it); outside one each write checks the registry in its own transaction
        (:meth:`_before_write`), so the scope never binds a bare put."""
        if not path:
            return super().write_ready(path)
        same = self._same(path)
        return any(same in state.prepared for state in self._chain() if state._parent is not None)

    def _before_write(self, view: WriteView, path: Path) -> None:
        """Register ``path``'s name in scoped-heed's registry, or raise
        :class:`HashCollision` if another name holds its hash."""
        self.scheme.encode(path, b"")  # validates the path
        if path:
            name, key = _name_key(path)
            other = self._owner(view, name, key)
            if other is None:
                view.put(key, bincode.STRING.encode(name))
            elif other != name:
                raise HashCollision(
                    f"scope name {name!r} has the same xxh32 hash {show_bytes(key[1:])} as {other!r}, which "
                    f"is registered in {REGISTRY_DB}; writing it would mix the two scopes' keys"
                )
        self.prepared.add(self._same(path))

    def children(self, view: ReadView, path: Path) -> list[Any]:
        """Registered names whose scope holds data: one seek per name."""
        if path:
            return []
        scheme = self.scheme
        names: list[Any] = []
        for _, name in registry_names(view):
            lo, hi = scheme.own_range((name,))
            if next(iter(view.scan(lo, hi, limit=1)), None) is not None:
                names.append(name)
        return names

    def subtree_ranges(self, view: ReadView, path: Path) -> list[tuple[bytes, bytes | None]]:
        return [self.scheme.subtree_range(path)]

    def decoder(
        self, view: ReadView, path: Path, later: ReadView | None = None
    ) -> Callable[[bytes], tuple[Path, Key]]:
        """As :meth:`Catalog.decoder`: a scope's name is read, when a key of it
        first comes, from ``later`` (default: ``view``)."""
        scheme = self.scheme
        names: dict[int, str] = {}
        source = view if later is None else later

        def decode(stored: bytes) -> tuple[Path, Key]:
            found, key = scheme.decode(stored)
            if not found:
                return (), key
            h = int(found[0])
            name = names.get(h)
            if name is None:
                raw = source.get(ScopedHeed.registry_key(h))
                if raw is None:
                    raise DecodeError(f"no name in {REGISTRY_DB} for scope hash {h:#010x}", 1)
                name = names[h] = _registered_name(ScopedHeed.registry_key(h), raw)
            return (name,), key

        return decode


class ScopedHeedKeyspace(Keyspace):
    """A :class:`Keyspace` over one scoped database of a scoped-heed environment
    (made by :func:`open`). ``scope()`` defaults to the database's key and value
    codecs; ``name``, ``api``, ``key_codec``, ``value_codec`` say which. Reading or
    writing a scope whose hash the registry gives to another name raises
    :class:`HashCollision`."""

    def __init__(self, store: Store, scheme: ScopedHeed, *, name: str, key: Codec, value: Codec) -> None:
        super().__init__(store, scheme, recorded=True, catalog=_Registry(store, scheme))
        self.name = name
        self.api = scheme.api
        self.key_codec = key
        self.value_codec = value

    def _codecs(self, key: str | Codec | None, value: str | Codec | None) -> tuple[Codec, Codec]:
        return (
            self.key_codec if key is None else resolve_codec(key),
            self.value_codec if value is None else resolve_codec(value),
        )

    def _over(self, store: Store) -> ScopedHeedKeyspace:
        """As :meth:`Keyspace._over`: with scoped-heed's registry as its catalog."""
        assert isinstance(self.scheme, ScopedHeed)
        return ScopedHeedKeyspace(
            store, self.scheme, name=self.name, key=self.key_codec, value=self.value_codec
        )

    def scope_names(self) -> list[str]:
        """Every name in the environment's registry (of any scoped database, with
        data here or not), in stored order."""
        return [name for _, name in registry_names(self.store)]

    def __repr__(self) -> str:
        return f"ScopedHeedKeyspace({self.url!r}, name={self.name!r}, api={self.api!r})"


def _layout(path: str, name: str, unnamed_default: bool, readonly: bool, dbs: set[str]) -> str:
    """The database that holds the default scope; refuses layouts it cannot read."""
    where = f"lmdb://{path}"
    legacy = f"{name}_default"
    default = "" if unnamed_default else name
    if REGISTRY_DB not in dbs and (legacy in dbs or f"{name}_scoped" in dbs):
        raise SchemeMismatch(
            f"{where} holds scoped-heed database {name!r} without the registry {REGISTRY_DB}: written by "
            "scoped-heed 0.1.x, whose scope hashes are SipHash of a per-instance hasher (no scope name can "
            "be recovered, and its keys are not XXH32); keyspace reads scoped-heed 0.2.0-alpha.1 and later"
        )
    if not unnamed_default and name not in dbs and legacy in dbs:
        return legacy  # 0.2.0-alpha.1/2: the default scope in NAME_default, XXH32 and the registry
    scoped = f"{name}_scoped" in dbs
    if scoped and not unnamed_default and name not in dbs:
        raise SchemeMismatch(
            f"{where} holds scoped-heed database {name!r} with its default scope in the unnamed database "
            f"({name}_scoped is there, no database {name!r}: written with unnamed_for_default()); open it "
            f"with unnamed_default=True (scoped-heed URL: &unnamed_default=true, CLI: --unnamed-default). "
            f"Opened without it, its default scope would be a new database {name!r}, which the writer "
            "never reads"
        )
    if scoped and unnamed_default and (name in dbs or legacy in dbs):
        held = name if name in dbs else legacy
        raise SchemeMismatch(
            f"{where} holds scoped-heed database {name!r} with its default scope in the database {held!r}, "
            f"not in the unnamed database; open it without unnamed_default (scoped-heed URL: drop "
            "unnamed_default=true, CLI: drop --unnamed-default). Opened with it, its default scope "
            "would be the unnamed database, which the writer never reads"
        )
    if readonly:
        missing = [d for d in (default, f"{name}_scoped", REGISTRY_DB) if d and d not in dbs]
        if missing:
            raise StoreError(
                f"{where} has no scoped-heed database {name!r} (missing LMDB databases "
                f"{', '.join(missing)}; it has {', '.join(sorted(dbs)) or 'none'})"
            )
    return default


def open(
    path: str | os.PathLike[str],
    name: str,
    *,
    api: str = "raw_bytes",
    unnamed_default: bool = False,
    key: str | Codec | None = None,
    value: str | Codec | None = None,
    readonly: bool = False,
    max_dbs: int = MAX_DBS,
    map_size: int | None = None,
) -> ScopedHeedKeyspace:
    """Open the scoped database ``name`` of the scoped-heed environment at ``path``
    (see the module docstring). Missing databases are created (as scoped-heed's
    ``create`` does) unless ``readonly``, which opens only an existing database and
    refuses every write with :class:`StoreError`. ``key``/``value``: codecs of K
    and V (``key`` only for ``types``). ``max_dbs``: named-database slots of the
    environment if this process does not have it open yet.

    The environment says where an existing database's default scope is: the
    unnamed database when ``NAME_scoped`` is there and ``NAME`` (and
    ``NAME_default``) is not. An open that asks for the other place raises
    :class:`SchemeMismatch` saying which the environment has and what to pass
    (it would create, or read, a default scope the writer never reads).

    Raises :class:`SchemeMismatch` for a scoped-heed 0.1.x environment,
    :class:`StoreError` for a missing database with ``readonly``, for a
    ``max_dbs`` or ``map_size`` that is no int from 0 to 2**63 - 1 (a ``readonly``
    that is no bool), or for too few ``max_dbs`` slots (nothing is created then:
    no database, and at a new path no environment),
    :class:`InvalidArgument` (a ``ValueError``) for an unknown ``api``, an empty
    ``name`` or the registry's own name (``__global_scope_metadata``)."""
    if api not in APIS:
        raise InvalidArgument(f"unknown scoped-heed api {api!r}; known: {', '.join(APIS)}")
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"scoped-heed database name {name!r} must be a non-empty str")
    if name == REGISTRY_DB:
        raise InvalidArgument(
            f"scoped-heed database name {name!r} is the environment's scope registry: its default scope "
            "would be the registry itself, whose entries name the scopes of every database"
        )
    if unnamed_default and api != "raw_bytes":
        raise InvalidArgument("unnamed_default is a raw_bytes option (scoped-heed's unnamed_for_default)")
    if api == "raw_bytes" and key is not None and native_type(resolve_codec(key)) is not bytes:
        raise InvalidArgument("a raw_bytes database has raw bytes keys; key codecs are for api='types'")
    if api == "bytes_keys" and key is not None and native_type(resolve_codec(key)) is not bytes:
        raise InvalidArgument("a bytes_keys database has raw bytes keys; key codecs are for api='types'")
    where = os.path.abspath(os.fspath(path))
    given: dict[str, Any] = {"max_dbs": max_dbs, "readonly": readonly}
    if map_size is not None:
        given["map_size"] = map_size
    # checked as keyspace.open checks them: a wrong one is a StoreError naming it
    options = resolve_options(LMDBStore, "lmdb", f"lmdb://{where}", [], given)
    readonly = options["readonly"]
    if not readonly and not os.path.exists(os.path.join(where, "data.mdb")):
        # a new environment: too few slots are refused before anything is created
        new = ("" if unnamed_default else name, f"{name}_scoped", REGISTRY_DB)
        check_room(new, (), options["max_dbs"], f"lmdb://{where}")
    stores: list[LMDBStore] = []
    try:
        probe = LMDBStore(where, **options)
        stores.append(probe)
        default_db = _layout(where, name, unnamed_default, readonly, set(probe.databases()))
        databases = (default_db, f"{name}_scoped", REGISTRY_DB)
        probe.check_room(databases)  # all three or none: never some created, then a refusal
        # appended one by one, so a failure closes the ones opened before it
        stores.extend(LMDBStore(where, db=db, **options) for db in databases)
        probe.close()
        stores.remove(probe)
    except BaseException:
        for store in stores:
            store.close()
        raise
    url = f"lmdb://{where}?scoped_heed={name}&api={api}"
    parts = [(DEFAULT_TAG, stores[0]), (NAMED_TAG, stores[1]), (REGISTRY_TAG, stores[2])]
    union: Store = PrefixUnion(parts, url=url)
    if readonly:
        union = ReadOnlyStore(union)
    default_value: Codec = BYTES if api == "raw_bytes" else bincode.BYTES
    key_codec = resolve_codec(key) if key is not None else (bincode.BYTES if api == "types" else BYTES)
    value_codec = resolve_codec(value) if value is not None else default_value
    return ScopedHeedKeyspace(union, ScopedHeed(api), name=name, key=key_codec, value=value_codec)
