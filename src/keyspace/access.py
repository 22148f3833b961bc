"""Per-scope access enforced by the server: :func:`grant` and :func:`revoke`.

On a store that declares ``capabilities.access_control`` (etcd), ``grant(ks,
path, user=…)`` creates or updates the role ``keyspace:<user>`` and binds it to the
user (created when missing, with ``password``). The role's permissions are:

- read-write (or read-only) on exactly the scope's subtree range,
  ``ks.scheme.subtree_range(path)`` — the same range ``Scope.drop`` deletes —
  turned into an etcd range by the store (its key prefix applied, an open end by
  the library's one range helper, so a tenant ``admin`` never reaches ``admin2``);
- read-write on the scope's anchor key ``scheme.prefix(path)`` where that key lies
  outside the subtree range (the ScopeHash registry entry of the scope's hash);
- the same on the sequencing keys of the subtree's scopes, which an append on
  etcd reads and rewrites (:func:`~keyspace._append.sequencing_range`: one key
  per scope, so a user's writes there can make only its own appends conflict);
- read-only on what every keyspace reads to open: the places of the scheme record,
  the footprint registry of raw-prefixed keyspaces, the recorded layouts, the
  record that says whether directories are in use and the directory nodes that
  would name a prefix among the keyspace's keys, the record of the features
  turned on (``changes=True``, ``accounting=True``), and the
  store's revision probe key (which the store reserves: no scope's key is stored
  there, :class:`~keyspace.errors.ReservedKey`).

A keyspace opened with that user's credentials then works inside the scope; a
read, write, scan, ``drop`` or ``scopes()`` outside it is refused by the server and
raised as :class:`~keyspace.errors.AccessDenied`, with nothing changed — whatever
client the user runs, on an etcd server that checks the permissions of nested
transactions (3.4.42, 3.5.28, 3.6.9 and later) and of open-ended watches (3.5.33,
3.6.14, 3.7.1 and later): on an older one a client that sends a nested ``Txn``
reaches every key (GHSA-rfx7-8w68-q57q), and one that watches from a key it may read
to the end of the keys sees every change after it (GHSA-xg4h-6gfc-h4m8), so
:func:`grant` warns (:class:`ServerAccessWarning`). keyspace itself never nests
a restricted user's commit on such a server, and its watches ask for the
scope's range only.
:func:`revoke` takes one scope's permission away again, or,
with no path, the whole role. Both need root credentials on the keyspace given.
"""

from __future__ import annotations

import warnings
from typing import Any

from . import _metadata
from ._append import sequencing_key_at, sequencing_range
from ._bytes import prefix_end
from .errors import InvalidArgument, StoreError
from .keyspace import Keyspace
from .schemes._base import Path
from .stores.etcd._versions import access_gaps

__all__ = ["ServerAccessWarning", "grant", "permissions", "revoke", "role_name", "scope_permissions"]


class ServerAccessWarning(UserWarning):
    """The etcd server does not enforce a grant against every client: its version
    lets a restricted user reach other keys through a nested transaction or an
    open-ended watch (:func:`~keyspace.stores.etcd._versions.access_gaps`)."""


def role_name(user: str) -> str:
    """The etcd role that holds ``user``'s keyspace permissions."""
    return f"keyspace:{user}"


def _access_store(ks: Keyspace) -> Any:
    store = ks.store
    if not getattr(store.capabilities, "access_control", False) or not hasattr(store, "access"):
        raise StoreError(
            f"the store at {ks.url!r} has no server-side access control "
            "(capabilities.access_control is false, or it was opened read-only); grant needs an "
            "etcd store opened for writing with root credentials"
        )
    return store


def scope_permissions(ks: Keyspace, path: Path, *, read_only: bool = False) -> list[Any]:
    """The permissions :func:`grant` gives for ``path``: the subtree range (and an
    anchor key outside it) and the sequencing keys of its appends, with write
    unless ``read_only``, then the read-only keys every keyspace needs to open.
    Cost: no I/O."""
    store = _access_store(ks)
    make = store.access().permission
    scheme = ks.scheme
    scheme.validate_path(path)
    start, stop = scheme.subtree_range(path)
    bounds = store.etcd_range(start, stop)
    out = []
    if bounds is not None:
        out.append(make(bounds[0], bounds[1], write=not read_only))
    anchor = scheme.prefix(path)
    outside = anchor < start or (stop is not None and anchor >= stop)
    if outside:
        out.append(make(store.etcd_key(anchor), b"", write=not read_only))
    appends = store.etcd_range(*sequencing_range(scheme, start, stop))
    if appends is not None:
        out.append(make(appends[0], appends[1], write=not read_only))
    if outside:
        out.append(make(store.etcd_key(sequencing_key_at(scheme, anchor)), b"", write=not read_only))
    out.extend(make(store.etcd_key(key), b"", write=False) for key in _metadata._candidate_keys(scheme))
    # open looks whether directories are in use and which features are recorded
    out.append(make(store.etcd_key(_metadata.DIRECTORY_RECORD), b"", write=False))
    out.append(make(store.etcd_key(_metadata.feature_record_key(scheme)), b"", write=False))
    for start, stop in _metadata.directory_node_ranges(scheme):
        nodes = store.etcd_range(start, stop)
        if nodes is not None:
            out.append(make(nodes[0], nodes[1], write=False))
    for start, stop in (
        (_metadata.REGISTRY_START, prefix_end(_metadata.REGISTRY_START)),
        (_metadata.LAYOUT_START, _metadata.LAYOUT_STOP),  # open looks for a recorded layout
    ):
        shared = store.etcd_range(start, stop)
        if shared is not None:
            out.append(make(shared[0], shared[1], write=False))
    out.append(make(store.probe_key(), b"", write=False))
    return out


def grant(
    ks: Keyspace, *paths: Path, user: str, password: str | None = None, read_only: bool = False
) -> list[Any]:
    """Give ``user`` access to the subtree of each scope in ``paths`` (see the module
    docstring). Creates the user (``password`` needed then) and the role when
    missing; granting a range again replaces its read/write mode. Returns the
    role's permissions afterwards. Cost: a few Auth calls per path."""
    if not paths:
        raise InvalidArgument("grant needs at least one scope path, got none")
    store = _access_store(ks)
    access = store.access()
    role = role_name(user)
    access.ensure_user(user, password)
    access.ensure_role(role)
    for path in paths:
        for permission in scope_permissions(ks, tuple(path), read_only=read_only):
            access.grant(role, permission)
    roles = access.user_roles(user) or []
    if role not in roles:
        access.bind(user, role)
    _warn_access_gaps(store)
    return list(access.permissions(role) or [])


def _warn_access_gaps(store: Any) -> None:
    """:class:`ServerAccessWarning` when the server answering ``status()`` does not
    enforce its roles against every client (:func:`access_gaps`). Cost: one
    ``Status`` call."""
    version = str(store.status().get("version", ""))
    gaps = access_gaps(version)
    if not gaps:
        return
    warnings.warn(
        ServerAccessWarning(
            f"etcd {version or '(version unknown)'} at {store.url} does not hold a grant against every "
            f"client of the user: {'; '.join(gaps)}. keyspace sends neither for such a user, but "
            "other clients can; upgrade etcd for the grant to hold against them"
        ),
        stacklevel=3,
    )


def revoke(ks: Keyspace, *paths: Path, user: str) -> list[Any]:
    """Take away what :func:`grant` gave for each of ``paths`` (their subtree range
    and anchor key; the read-only open keys stay while any scope is granted), or with
    no path the whole role ``keyspace:<user>``. The user itself is kept. Returns the
    role's remaining permissions."""
    store = _access_store(ks)
    access = store.access()
    role = role_name(user)
    if access.permissions(role) is None:
        return []
    if not paths:
        roles = access.user_roles(user) or []
        if role in roles:
            access.unbind(user, role)
        access.delete_role(role)
        return []
    current = {(p.key, p.range_end) for p in access.permissions(role) or []}
    for path in paths:
        for permission in scope_permissions(ks, tuple(path)):
            if permission.write and (permission.key, permission.range_end) in current:
                access.revoke(role, permission.key, permission.range_end)
    return list(access.permissions(role) or [])


def permissions(ks: Keyspace, user: str) -> list[Any] | None:
    """The permissions of ``user``'s role, or ``None`` when it has none."""
    result = _access_store(ks).access().permissions(role_name(user))
    return None if result is None else list(result)
