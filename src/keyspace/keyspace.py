"""Keyspace: one store, one scheme, many scopes.

``keyspace.open(url_or_path)`` opens a store (a bare path is LMDB) with a scheme
(``TupleScheme`` unless the store records another) and hands out :class:`Scope`
objects. ``ks.transaction()`` makes reads and writes across any scopes atomic;
outside a transaction each operation is atomic on its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

from . import (
    _changes,  # noqa: F401  # registers the changes=True feature
    _expiry,  # registers the ttl=True feature
    _metadata,
)
from ._accounting import ScopeStats, accounting_of, write_feature_record
from ._blocks import Block, not_entered
from ._closing import Closing
from ._retry import run_atomically
from ._space import Space, SpaceSnapshot
from ._write_hooks import feature_options, hook_store
from .catalog import Catalog, check_leaf_depth
from .codecs import Codec, resolve_codec
from .directory import Directories, Directory
from .errors import AccountingUnavailable, InvalidArgument, InvalidName, SchemeMismatch, StoreError
from .schemes import Scheme, TupleScheme, scheme_from_name
from .schemes._base import exact_path
from .schemes._layouts import LayoutCache
from .scope import Scope
from .stores import local_path, open_store
from .stores._base import ReadView, Store, WriteView

_path_memo: Callable[[str, Callable[..., Scope]], Callable[..., Scope]] | None
try:  # the C form of Transaction.scope (see _memo_in_c)
    from ._scope_accel import path_memo as _path_memo
except ImportError:  # pragma: no cover - the C module is optional
    _path_memo = None

_F = TypeVar("_F", bound=Callable[..., Scope])


def _memo_in_c(name: str) -> Callable[[_F], _F]:
    """The decorator of a method ``m(self, *path, **kw)`` that keeps what it makes in
    the dict ``self.<name>``: where the optional C module is built, the method is
    served by :func:`keyspace._scope_accel.path_memo` (a hit costs a tuple and a
    dict lookup, no Python frame; the method is its reference), else it is the
    method itself."""

    def decorate(method: _F) -> _F:
        return method if _path_memo is None else cast(_F, _path_memo(name, method))

    return decorate


if TYPE_CHECKING:
    from ._feeds import Feed

__all__ = ["Keyspace", "Snapshot", "Transaction", "attach", "open"]


class Keyspace(Closing):
    """A store seen through a scheme. Use :func:`keyspace.open` to make one.

    ``scope(*path)`` gives a :class:`Scope`; ``transaction()`` an atomic context;
    ``close()`` (or ``with``) releases the store. ``scheme``, ``store`` and ``url``
    are read-only attributes; ``catalog`` holds the facts that keep its scopes
    apart (:class:`~keyspace.catalog.Catalog`), which every scope shares.
    """

    def __init__(
        self,
        store: Store,
        scheme: Scheme,
        *,
        recorded: bool,
        leaf_depth: int | None = None,
        watch_records: bool | None = None,
        found_empty: bool | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        """``catalog``: the catalog to keep (a subclass's, such as a scoped-heed
        registry); by default one made of ``store``, ``scheme`` and the facts given."""
        self.store = store
        self.scheme = scheme
        if catalog is None:
            catalog = Catalog(
                store,
                scheme,
                recorded=recorded,
                leaf_depth=leaf_depth,
                watch_records=watch_records,
                found_empty=found_empty,
            )
        self.catalog = catalog
        self._space = Space(store, self.catalog, LayoutCache(scheme), self)
        self._default_scopes: dict[tuple[Any, ...], Scope] = {}  # made with the default codecs
        # a scope made while the store's record was watched for reads the store
        # through a check: made again once the record is known, it reads without
        self.catalog.when_recorded(self._default_scopes.clear)
        # per path, the view type and catalog state of a scope that a view of that
        # type with that state rebinds by copying (see _scope_on), and the scope
        self._rebinds: dict[tuple[Any, ...], tuple[type, Catalog, Scope]] = {}
        self.batch_limit = self.catalog.batch_limit
        self._close_store = True
        self._directories: Directories | None = None
        self.directory_manual_prefixes = False

    @property
    def url(self) -> str:
        return self.store.url

    def __repr__(self) -> str:
        return f"Keyspace({self.url!r}, scheme={self.scheme!r})"

    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path`` (any depth; ``()`` is the root). Nothing is written
        until a key is set. ``key``/``value`` name codecs (``"str"``, ``"int"``,
        ``"json"``, ``"bytes"``) or pass objects with ``encode``/``decode``.

        Raises :class:`InvalidName` when the scheme cannot represent the path. Cost:
        a scope with the default codecs of a path already made (up to 4096 kept) is one dictionary
        lookup; any other costs the scope's construction over its cached layout."""
        if key is None and value is None:
            try:  # _default_scope's lookup inline: one frame less per scope asked
                found = self._default_scopes[path]
            except MemoryError:
                raise
            except Exception:
                pass
            else:
                if exact_path(path):
                    return found
            return self._default_scope(path)
        return Scope(self._space, self.store, self.catalog, path, *self._codecs(key, value))

    def scopes(self) -> list[Any]:
        """The direct children of the root that hold data: ``scope().scopes()``
        (see :meth:`Scope.scopes`; one seek per child)."""
        return self._default_scope(()).scopes()

    @property
    def directories(self) -> Directories:
        """The keyspace's directory tree (:mod:`keyspace.directory`): paths mapped
        to short allocated prefixes, FoundationDB's directory layer bytes."""
        got = self._directories
        if got is None:
            got = self._directories = Directories(self, manual=self.directory_manual_prefixes)
        return got

    def directory(
        self, *path: str, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> Directory:
        """``directories.create_or_open(path)``: the directory at ``path``, made
        (with its parents) when there is none (:class:`DirectoryError` for a
        partition, which holds no keys: open it with ``directories.open``)."""
        return self.directories.directory(path, key=key, value=value)

    def expire(self, limit: int = 1000) -> int:
        """Delete at most ``limit`` keys whose ``ttl`` has passed, oldest deadline
        first, through the normal write path (the change log records their
        deletes, accounting's counts drop), in one transaction; return how many.
        Expired keys are invisible to every read already: this frees their room.
        0 on a keyspace opened without ``ttl=True``. See :mod:`keyspace._expiry`.
        Cost: a scan of the expired deadlines read, a delete per key and its records'."""
        return _expiry.expire(self, limit)

    def feed(self, name: str, scope_path: tuple[Any, ...] = (), *, subtree: bool = False) -> Feed:
        """The durable consumer ``name`` of the changes of the scope at
        ``scope_path`` (with ``subtree=True``, of it and every scope below it):
        ``read()`` batches, ``ack(cursor)``; opened again, it goes on after its
        last acknowledged change (:mod:`keyspace._feeds`). Needs ``changes=True``
        (or etcd): else :class:`WatchUnsupported`."""
        from ._feeds import open_feed

        return open_feed(self, name, scope_path, subtree)

    def _default_scope(self, path: tuple[Any, ...]) -> Scope:
        """The scope at ``path`` with the default codecs, made once per path (up to
        4096 kept; str and bytes paths only: ``(1,) == (True,)`` in Python)."""
        try:
            found = self._default_scopes[path]
        except MemoryError:
            raise
        except Exception:  # not made yet, or unhashable, or a component's __hash__/__eq__ raises:
            pass  # Scope names the fault, if any
        else:
            if exact_path(path):  # not an equal path of other types (1.0 == 1, memoryview == bytes)
                return found
        made = Scope(self._space, self.store, self.catalog, path, *self._codecs(None, None))
        if len(self._default_scopes) < 4096 and exact_path(path):
            self._default_scopes[path] = made
        return made

    def _scope_on(self, path: tuple[Any, ...], view: ReadView, state: Catalog) -> Scope:
        """The scope at ``path`` with the default codecs on ``view`` (a snapshot or
        transaction) with the catalog state ``state``: the default scope's
        :meth:`~keyspace._scope_core.ScopeCore._on`, or, where the last one made
        for ``path`` was on a view of the same type with the same state and
        bound nothing but the view's point read (a snapshot per request of a
        keyspace whose reads learn nothing), a copy of that one rebound to
        ``view`` (kept view-less, up to 4096 paths; only with the keyspace's own
        catalog state, which a transaction never has). Cost: a snapshot's first
        scope of a path, a copy of the fields and five stores."""
        kept = self._rebinds.get(path)
        if kept is not None and kept[0] is type(view) and kept[1] is state:
            return kept[2]._rebound(view)
        made = self._default_scope(path)._on(view, state)
        if (
            state is self.catalog  # a snapshot's reads that learn nothing, not a transaction's child
            and made._template_for(view, state)
            and len(self._rebinds) < 4096
            and exact_path(path)
        ):
            self._rebinds[path] = (type(view), state, made._unbound())
        return made

    def _codecs(self, key: str | Codec | None, value: str | Codec | None) -> tuple[Codec, Codec]:
        """The key and value codecs of a scope made with ``key`` and ``value``
        (``None``: the keyspace's default, bytes)."""
        return resolve_codec(key), resolve_codec(value)

    def _over(self, store: Store) -> Keyspace:
        """A keyspace of this kind, with this one's scheme, catalog facts and codecs,
        over ``store`` (an async keyspace's plan store, which reads only inside
        operations: nothing is read here)."""
        catalog = self.catalog
        over = Keyspace(
            store,
            self.scheme,
            recorded=catalog.recorded,
            leaf_depth=catalog.leaf_depth,
            watch_records=catalog.watch_records,
            found_empty=catalog.found_empty,
        )
        over._space.committed = self.store  # a watch's late reads: this keyspace's store
        return over

    def stats(self) -> ScopeStats:
        """The counts of the whole keyspace, ``scope().stats()`` (see
        :meth:`Scope.stats`): one point read with ``accounting=True``."""
        return self._default_scope(()).stats()

    def set_quota(self, path: tuple[Any, ...], keys: int | None = None, bytes: int | None = None) -> None:
        """Limit the scope at ``path`` (a tuple; ``()`` the root) and everything
        below it to ``keys`` keys and ``bytes`` stored bytes (key + value); ``None``
        lifts a limit. From then on a write (a put, a batch, a transaction's commit,
        from any process) that would take the scope or an ancestor past a quota
        raises :class:`~keyspace.errors.QuotaExceeded` and writes nothing: the check
        is made inside the write's own atomic batch. A scope already past a new
        quota keeps its keys; only writes that grow it are refused. Needs
        accounting (:class:`~keyspace.errors.AccountingUnavailable`). Cost: one
        transaction of one point read and one write (run again when it loses a race)."""
        counts = self._counts("set_quota")
        if not isinstance(path, tuple):
            raise InvalidArgument(
                f"set_quota takes the scope's path as a tuple (('tenant1',), () the root), not {path!r}"
            )
        self.scope(*path)  # a path the scheme cannot represent: InvalidName

        def step(tx: WriteView) -> None:
            counts.set_quota(tx, path, keys, bytes)
            write_feature_record(tx, self.scheme)

        # the transaction is this call's own: one that loses a race runs again
        run_atomically(self.store.transaction, step, f"set_quota of {path!r} in {self.url}")

    def quotas(self) -> dict[tuple[Any, ...], tuple[int | None, int | None]]:
        """Every quota set: ``{path: (keys, bytes)}`` (paths as the scheme decodes
        them; ``None``: no limit). Cost: a scan of the counter records."""
        counts = self._counts("quotas")
        with self.store.snapshot() as view:
            return {
                path: (rec[4], rec[5])
                for path, rec in counts.records(view)
                if rec[4] is not None or rec[5] is not None
            }

    def _counts(self, what: str) -> Any:
        counts = accounting_of(self.store)
        if counts is None:
            raise AccountingUnavailable(
                f"{what} needs accounting, which {self.url} does not keep: open it with accounting=True on a "
                "new store, or run 'keyspace accounting enable URL'"
            )
        return counts

    def transaction(self) -> Block[Transaction]:
        """Atomic reads and writes across scopes::

            with ks.transaction() as tx:
                tx.scope("tenant1", "users")[b"bob"] = b"..."
                tx.scope("tenant1", "audit")[b"0001"] = b"added bob"

        Commits when the block exits normally; discards everything when it raises.
        Reads inside see a consistent snapshot and the transaction's own writes.
        The transaction's scopes end with the block, and so do the iterators they
        gave out (``items()``, ``keys()``, ``values()``, iteration, ``subtree()``,
        the collections' iterators): read on after the block, they raise
        :class:`StoreClosed` at their next read of the store (items already read
        into a page may still come first), never reading the store as it is
        after the block. The handle exists only inside ``with``: an attribute
        asked of ``ks.transaction()`` itself raises
        :class:`~keyspace.errors.NotEntered`, which says so."""
        return Block(self._transaction, "ks.transaction()")

    @contextmanager
    def _transaction(self) -> Iterator[Transaction]:
        """The block of :meth:`transaction`."""
        with self._space.transaction() as (view, state):
            tx = Transaction(self, view, state)
            yield tx
            if tx._directories is not None:  # no key left under a prefix it removed
                tx._directories.check_removed(view)

    def snapshot(self) -> Snapshot:
        """A read-only consistent view: ``with ks.snapshot() as snap``,
        ``snap.scope(...)`` reads the store as it was when the block was entered.
        Its scopes, and the iterators they gave out, end with the block as a
        transaction's do (:class:`StoreClosed` at their next read of the store).
        Cost: the store's snapshot (on LMDB one read transaction) and a few
        objects, so that a snapshot per request is cheap. Used without ``with``,
        its scopes raise :class:`~keyspace.errors.NotEntered`, which says so."""
        return Snapshot(self)

    def close(self) -> None:
        """Close the store (unless attached with ``close_store=False``). Idempotent;
        further use raises :class:`StoreClosed`."""
        if self._close_store:
            self.store.close()


class Transaction:
    """The handle of :meth:`Keyspace.transaction`: ``scope(*path)`` gives scopes
    whose reads and writes belong to the transaction."""

    _directories: Directories | None = None

    def __init__(self, keyspace: Keyspace, view: ReadView, state: Catalog) -> None:
        self.keyspace = keyspace
        self.view = view
        self.catalog = state
        self._bound: dict[tuple[Any, ...], Scope] = {}

    @property
    def directories(self) -> Directories:
        """The keyspace's directory tree read and changed through this transaction
        (a snapshot's: read only)."""
        got = self._directories
        if got is None:
            keyspace = self.keyspace
            got = Directories(keyspace, self.view, self.catalog, manual=keyspace.directory_manual_prefixes)
            got.rng = keyspace.directories.rng
            self._directories = got
        return got

    def directory(
        self, *path: str, key: str | Codec | None = None, value: str | Codec | None = None
    ) -> Directory:
        """``directories.create_or_open(path)`` inside this transaction (see
        :meth:`Keyspace.directory`)."""
        return self.directories.directory(path, key=key, value=value)

    @_memo_in_c("_bound")
    def scope(self, *path: Any, key: str | Codec | None = None, value: str | Codec | None = None) -> Scope:
        """The scope at ``path`` inside this transaction (same API as outside). Cost:
        with the default codecs, the keyspace's scope of ``path`` bound to this
        transaction's view (a copy of its fields, see :meth:`Keyspace.scope`),
        made once per path and kept for this transaction (up to 4096; exact str
        and bytes paths only, as :meth:`Keyspace._default_scope`): a scope per
        request in one snapshot costs a tuple and a dict lookup, with no Python
        frame when the C module is built (this method is then the reference of
        :func:`keyspace._scope_accel.path_memo`); with others, the scope's
        construction."""
        if key is None and value is None:
            bound = self._bound
            if bound:  # the first scope of a transaction looks up nothing
                try:
                    found = bound.get(path)  # a miss raises nothing: it is the common case here
                except MemoryError:
                    raise
                except Exception:  # unhashable, or a component's __hash__/__eq__ raises
                    found = None
                if found is not None and exact_path(path):  # not an equal path of other types
                    return found
            made = self.keyspace._scope_on(path, self.view, self.catalog)
            if len(bound) < 4096 and exact_path(path):
                bound[path] = made
            return made
        keyspace = self.keyspace
        return Scope(keyspace._space, self.view, self.catalog, path, *keyspace._codecs(key, value))


class _NotEntered:
    """A class attribute of a block's handle that the block sets on its instance
    when entered (an instance's value hides it): asked before, it raises
    :class:`~keyspace.errors.NotEntered` naming the attribute."""

    __slots__ = ("_name", "_what")

    def __init__(self, what: str, name: str) -> None:
        self._what = what
        self._name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:  # asked of the class (help(), introspection): this object
            return self
        raise not_entered(self._what, self._name)


class Snapshot(SpaceSnapshot, Transaction):
    """The block of :meth:`Keyspace.snapshot`, and, once entered, the
    :class:`Transaction` handle whose scopes read the snapshot (``with
    ks.snapshot() as snap``: ``snap`` is this object)."""

    def __init__(self, keyspace: Keyspace) -> None:  # view and catalog: set when entered
        space = keyspace._space
        SpaceSnapshot.__init__(self, space.store, space.catalog)
        self.keyspace = keyspace
        self._bound = {}

    # what the block sets when entered; asked before, each raises NotEntered. Not a
    # __getattr__: a class with one has every attribute read through a slower hook
    # (a scope per request in a snapshot reads two)
    view = _NotEntered("ks.snapshot()", "view")
    catalog = _NotEntered("ks.snapshot()", "catalog")

    def __enter__(self) -> Snapshot:  # type: ignore[override]  # the handle, not (view, state)
        self.view, self.catalog = self._begin()
        self._bound = {}
        return self


def open_existing_or_new(url: str, *, create: bool, readonly: bool, **options: Any) -> Store:
    """``open_store(url)``, except that with ``create=False`` a local store that
    does not exist raises :class:`StoreError` instead of being created: a missing
    path, and a path that holds no store (an empty SQLite file or folder, an LMDB
    environment without the named database asked for), which a read-only open
    is asked first, as it refuses them without making anything."""
    if not create:
        local = local_path(url)
        if local is not None and not os.path.exists(local):
            raise StoreError(
                f"no store at {url!r}: nothing exists at that path; check the path, or make a new "
                "store there (keyspace.open makes one by default; so does a command that writes, "
                "such as keyspace put)"
            )
        if local is not None and not readonly:
            open_store(url, readonly=True, **options).close()
    return open_store(url, readonly=readonly, **options)


def open(
    url_or_path: str | os.PathLike[str],
    *,
    scheme: Scheme | str | None = None,
    create: bool = True,
    readonly: bool = False,
    leaf_depth: int | None = None,
    directory_manual_prefixes: bool = False,
    **options: Any,
) -> Keyspace:
    """Open a keyspace on the store at ``url_or_path``.

    A bare path opens LMDB; URLs: ``memory:``, ``lmdb:///path``,
    ``sqlite:///file``, ``leveldb:///dir``, ``rocksdb:///dir``,
    ``etcd://h1:p1,h2:p2``. ``scheme`` is a :class:`Scheme` or a scheme name;
    without one, the scheme recorded in the store is used; an empty store gets
    ``TupleScheme()``, and a store that holds keys but no record raises
    :class:`SchemeMismatch` (its scheme is never guessed: name it). Opening with
    another scheme than the recorded one, or one whose keys would overlap another
    keyspace's recorded in the store, raises :class:`SchemeMismatch`; a record
    that cannot be read raises :class:`UnreadableRecord` and stays as it is. With
    ``create=False`` a missing local store raises :class:`StoreError` instead of
    being created.

    ``options`` are the store's (``map_size``, ``sync``, ``timeout``, …; LMDB's
    ``db=NAME`` for a named database and ``max_dbs``; on etcd also ``user``,
    ``password``, ``cacert``, ``cert``, ``key``; see
    :func:`keyspace.stores.open_store`), also accepted as URL query parameters;
    an unknown one raises :class:`StoreError` listing the known ones.
    ``readonly=True`` opens an existing store of the URL's engine without creating
    or changing anything (a path that is not such a store raises
    :class:`StoreError`); every write then raises :class:`StoreError`. Every
    failure to open is a :class:`StoreError` naming its cause.

    ``leaf_depth`` declares, for a scheme that cannot tell a scope's own keys
    from its children's (LengthPrefixed, Naive), the depth of the scopes that
    hold keys in data another program wrote (a cw-storage-plus ``Map`` of
    ``n``-element keys over a namespace: the namespace's depth); shallower scopes
    are branches, deeper ones raise :class:`LayoutError`, and no layout is
    recorded. Without it a LengthPrefixed keyspace records each leaf it creates
    (below a branch root, where no key can be), so a reopen knows the layout; a
    store with keys and no recorded layout raises :class:`LayoutError` on any
    operation that could mix a parent's keys with a child's.

    ``changes=True`` keeps a change log inside every write (:mod:`keyspace._changes`):
    :meth:`Scope.watch` then works on every engine, other processes' writes
    included, and :meth:`Keyspace.feed` gives durable consumers;
    ``changes={"retention": N, "max_entries": E, "max_age": S}`` sets how much
    of it is kept (commits, changed keys, seconds). It is recorded with the next write, so every later
    opener keeps it. On etcd the store's own revisions serve.

    ``directory_manual_prefixes=True`` lets ``ks.directories.create`` take a
    ``prefix`` (see :mod:`keyspace.directory`).

    The scheme is recorded (for schemes with reserved space) with the first write,
    inside that write's own atomic transaction, so opening and reading never
    change a store. Cost: up to four point reads and two short scans.
    """
    url = os.fspath(url_or_path)
    scheme = _scheme_argument(scheme, leaf_depth)
    features = feature_options(options)
    store = open_existing_or_new(url, create=create, readonly=readonly, **options)
    try:
        if type(directory_manual_prefixes) is not bool:
            raise InvalidArgument(
                f"directory_manual_prefixes must be True or False, not {directory_manual_prefixes!r}"
            )
        scheme, recorded = _scheme_of(store, scheme, url)
        store = hook_store(store, scheme, features, _metadata.read_features(store, scheme, url))
        ks = Keyspace(store, scheme, recorded=recorded, leaf_depth=leaf_depth)
        ks.directory_manual_prefixes = directory_manual_prefixes
        return ks
    except BaseException:
        store.close()
        raise


def attach(
    store: Store,
    *,
    scheme: Scheme | str | None = None,
    close_store: bool = True,
    leaf_depth: int | None = None,
    **features: Any,
) -> Keyspace:
    """A keyspace over ``store``, a store object already open (for example one
    :class:`~keyspace.stores.MemoryStore` shared by several keyspace objects).
    The scheme is chosen and checked as by :func:`open`; closing the keyspace
    closes the store unless ``close_store`` is false. ``features``: as
    :func:`open`'s (``changes=True``)."""
    asked = feature_options(features)
    if features:
        raise InvalidArgument(f"attach() takes no option {sorted(features)!r}")
    chosen, recorded = _scheme_of(store, _scheme_argument(scheme, leaf_depth), store.url)
    hooked = hook_store(store, chosen, asked, _metadata.read_features(store, chosen, store.url))
    ks = Keyspace(hooked, chosen, recorded=recorded, leaf_depth=leaf_depth)
    ks._close_store = close_store
    return ks


def _scheme_argument(scheme: Any, leaf_depth: Any) -> Scheme | None:
    """The ``scheme`` argument of :func:`open` and :func:`attach` as a scheme (a name
    looked up), checked with ``leaf_depth`` before any store is opened or created:
    :class:`InvalidArgument` for an object that is no scheme."""
    check_leaf_depth(leaf_depth)
    if isinstance(scheme, str):
        return scheme_from_name(scheme)
    if scheme is not None and not isinstance(scheme, Scheme):
        raise InvalidArgument(
            f"scheme={scheme!r} has type {type(scheme).__name__}, not a Scheme or a scheme name "
            "(TupleScheme(), 'tuple', 'sublevel', ...)"
        )
    if scheme is not None:
        _check_unreserved(scheme)
    return scheme


def _check_unreserved(scheme: Scheme) -> None:
    """Refuse a scheme whose keys would lie under the records keyspaces keep in a
    store: asked of the scheme given before any store is opened, and of a
    recorded one when it is read."""
    if _metadata.reserved_prefix(scheme):
        raise InvalidName(
            f"{scheme!r}: a raw prefix that starts with ff 'keyspace' is reserved for the records keyspaces "
            "keep in a store"
        )


def _scheme_of(store: ReadView, scheme: Scheme | None, url: str) -> tuple[Scheme, bool]:
    """The scheme to open ``store`` with, and whether its record is there: the
    checks of :func:`open` (the first write repeats them inside its batch). On a
    store with snapshots they read one snapshot, so another process's first write
    (keys and record together) is seen whole or not at all."""
    if isinstance(store, Store) and store.capabilities.snapshots:
        with store.snapshot() as view:
            return _scheme_of_view(view, scheme, url)
    return _scheme_of_view(store, scheme, url)


def _scheme_of_view(store: ReadView, scheme: Scheme | None, url: str) -> tuple[Scheme, bool]:
    recorded = _metadata.read(store, scheme, url)
    if scheme is None:
        if recorded is None:
            if _metadata.holds_data(store):
                raise SchemeMismatch(
                    f"the store at {url!r} holds keys but no scheme record (data another program wrote, "
                    "or a keyspace that records no scheme); its scheme is not guessed: open it with "
                    "scheme=... naming the scheme its keys were written with"
                )
            return TupleScheme(), False
        scheme = recorded
    elif recorded is not None:
        _metadata.check(recorded, scheme, url)
    _check_unreserved(scheme)
    other = _metadata.overlapping(store, scheme, url)
    if other is not None:
        raise SchemeMismatch(
            f"the store at {url!r} holds the keyspace {other!r}, whose keys would overlap those of {scheme!r}"
        )
    if _metadata.directories_overlap(store, scheme):
        raise SchemeMismatch(
            f"the store at {url!r} holds directories whose nodes or prefixes would overlap the keys of "
            f"{scheme!r}"
        )
    return scheme, recorded is not None
