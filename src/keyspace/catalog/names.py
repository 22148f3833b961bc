"""The name registry of a scheme that stores names as hashes
(:attr:`~keyspace.schemes.Scheme.hashed_names`: ScopeHash).

An entry is ``u32le(hash) -> name`` at the key that is the hash alone (4
bytes), written in the batch of the name's first write and never removed: a
name whose hash another name holds raises :class:`HashCollision` on every
access (reads too), and an entry whose name does not hash to its key is a
:class:`DecodeError`, never trusted.
"""

from __future__ import annotations

from collections.abc import Iterator

from .._bytes import prefix_end
from ..errors import DecodeError, HashCollision, KeyspaceError, show_bytes
from ..schemes._base import Path, Scheme
from ..stores._base import ReadView, WriteView
from .leaves import LeafRecords
from .state import SETTLED, GuardAnswer, ReadGuard, _first


class NameRegistry(LeafRecords):
    """The hashed names of one keyspace (module docstring): the entries known,
    the check of a name against the registry, and its registration."""

    def _registered(self, key: bytes) -> str | None:
        for state in self._chain():
            name = state.registered.get(key)
            if name is not None:
                return name
        return None

    def _hash_guard(self, path: Path) -> ReadGuard:
        scheme = self.scheme
        key = scheme.prefix(path)
        name = str.__str__(path[0])  # the name as stored: a str subclass's own __eq__ does not run
        if key == scheme.prefix(()):
            raise HashCollision(
                f"scope name {show_bytes(name)} has the same xxh32 hash {show_bytes(key)} as the default "
                "scope, which reserves it; choose another name"
            )

        registries = [state.registered for state in self._chain()]  # as _registered walks them

        def check(view: ReadView) -> GuardAnswer:
            for registered in registries:
                known = registered.get(key)
                if known is not None:
                    if known == name:
                        return SETTLED
                    break
            raw = view.get(key)
            if raw is None and self.recorded and _first(view, key, prefix_end(key)) is not None:
                # every name of a recorded keyspace is registered with its first key;
                # the committed store answers the two reads apart, so the keys may be
                # a first write's that committed between them, with its entry: an
                # entry is never removed, so a read after the keys' shows it
                raw = view.get(key)
                if raw is None:
                    raise HashCollision(
                        f"scope name {show_bytes(name)}: the store holds keys under its xxh32 hash "
                        f"{show_bytes(key)} but no name registry entry says whose they are (the "
                        "registry was changed outside keyspace); this scope cannot be used"
                    )
            if raw is None:
                # no name holds the hash yet, so a recorded keyspace has no key there:
                # read nothing rather than what a same-hash name may write meanwhile
                # (asked again at the next read); data another program wrote is read
                return not self.recorded
            other = self._registry_name(key, raw)
            if other != name:
                raise HashCollision(
                    f"scope name {show_bytes(name)} has the same xxh32 hash {show_bytes(key)} as "
                    f"{show_bytes(other)}, which "
                    "is registered in this store; its keys are that scope's, so this one cannot be used"
                )
            if view is self.store:  # committed: the entry stays (drop never removes it)
                self.registered[key] = name
            # the name owns its hash in this view for good: no entry is ever removed
            # or replaced, so the scope of this view may stop asking
            return SETTLED

        return check

    def _registry_name(self, key: bytes, raw: bytes) -> str:
        """The name of a name registry entry, checked: it must be UTF-8 text whose
        hash (the scheme's prefix of its path) is ``key``; anything else is a
        :class:`DecodeError`."""
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            name = None
        if name is None or not name or _hash_key(self.scheme, name) != key:
            raise DecodeError(
                f"the {self.scheme.name} registry entry at {show_bytes(key)} holds {show_bytes(raw)}, which "
                "is not a name with that hash: the registry is corrupt, so the scopes under that hash cannot "
                "be told apart",
                0,
            )
        return name

    def _register(self, view: WriteView, path: Path) -> None:
        if not path:
            return
        scheme = self.scheme
        key = scheme.prefix(path)  # u32le(hash): the registry entry of that hash
        name = str.__str__(path[0])  # the name as stored (a str subclass's own methods do not run)
        if self._registered(key) == name:
            return
        self._hash_guard(path)(view)  # HashCollision for a taken hash
        if view.get(key) is None:
            view.put(key, name.encode())
        self.registered[key] = name

    def _hash_registry(self, view: ReadView) -> Iterator[tuple[bytes, str]]:
        """``(registry key, name)`` of every name registered in a hashed-name store,
        except the default scope's: a skip scan on one seeker, one seek per hash
        block (registry key, then the block's keys are skipped) and one point read
        per registry entry. Raises :class:`DecodeError` for an entry whose name
        does not hash to its key."""
        default_key = self.scheme.prefix(())
        size = self._entry_size
        cursor: bytes | None = b""
        with view.seeker() as seeker:
            while cursor is not None:
                k = seeker.seek(cursor)
                if k is None:
                    break
                if len(k) < size:  # reserved keys (metadata) sort outside every hash block
                    cursor = k + b"\x00"
                    continue
                if len(k) == size and k != default_key:
                    v = view.get(k)
                    if v is not None:
                        yield k, self._registry_name(k, v)
                cursor = prefix_end(k[:size])


def _hash_key(scheme: Scheme, name: str) -> bytes | None:
    """The registry key of ``name`` in a scheme with :attr:`~Scheme.hashed_names`
    (its prefix: the hash alone), ``None`` for a name the scheme refuses."""
    try:
        return scheme.prefix((name,))
    except KeyspaceError:
        return None
