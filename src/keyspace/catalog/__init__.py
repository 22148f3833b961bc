"""The catalog: the facts that keep a keyspace's scopes apart, checked on every path.

A :class:`Catalog` belongs to one keyspace (one store, one scheme); every scope
holds it. It knows

- the **scheme record** (``_metadata``): a keyspace that has not seen its record
  reads and writes it inside the atomic batch of its first write, together with
  the records of the keyspaces whose footprint could overlap its own (raw-prefixed
  tuple keyspaces, listed in the footprint registry), so two keyspaces racing on
  a fresh store, or one opened before the other wrote, never mix their keys;
- the **name registry** of a scheme that stores names as hashes
  (:attr:`~Scheme.hashed_names`: ScopeHash), ``u32le(hash) -> name`` at the key
  that is the hash alone (4 bytes): a name whose hash another name holds raises
  :class:`HashCollision` on every access (reads too), and an entry whose name
  does not hash to its key is a :class:`DecodeError`, never trusted;
- the **leaf/branch layout** of schemes that cannot tell a scope's own keys from
  its children's (``separates_own_keys`` False: ``LengthPrefixed``, ``Naive``): a
  scope holds keys or child scopes, not both (:class:`LayoutError`), recorded in
  the store where the scheme declares :attr:`~Scheme.records_layout`;
- what the engine can store (``check_storable``).

What a scope calls, and what it costs:

- :meth:`ranges` once when the scope is made: its own ranges less the ranges
  where the keyspace keeps its records (:meth:`reserved_in`, refused to every
  key of the scope), memoised per path;
- :meth:`guard` once when the scope is made: ``None`` when reads need no check
  (every scheme but ScopeHash names and the layered schemes), else a function
  called before each read of own keys until it answers :data:`SETTLED` (a
  ScopeHash name registered as its own, a LengthPrefixed leaf: facts no later
  write can change), after which the scope drops it and reads cost nothing
  extra;
- :meth:`write_ready` / :meth:`first_write`: a path's first write runs the checks
  and records in one atomic transaction with the data (inside the caller's
  transaction when there is one); after it, writes cost nothing extra;
- :meth:`children`, :meth:`subtree_ranges`, :meth:`decoder` for structure.

State learnt inside a transaction is kept only when it commits (:meth:`child`,
:meth:`commit`).

Where each fact lives, lowest floor first (each floor is a class that calls
only the floors below it; :class:`Catalog` is the top one and adds nothing):

- :mod:`~keyspace.catalog.state`: the store, the scheme, what the keyspace has
  learnt, a transaction's :meth:`~Catalog.child` and its :meth:`~Catalog.commit`;
- :mod:`~keyspace.catalog.records`: the scheme record, the footprints, the
  reserved ranges and a scope's own ranges less them;
- :mod:`~keyspace.catalog.leaves`: the leaf/branch records;
- :mod:`~keyspace.catalog.names`: the hashed-name registry;
- :mod:`~keyspace.catalog.atomic`: first writes and deletes as one atomic
  batch, and the engine policy they follow;
- :mod:`~keyspace.catalog.guards`: read guards and the views scopes read through;
- :mod:`~keyspace.catalog.structure`: children, subtree ranges, decoders.
"""

from __future__ import annotations

from .._metadata import LAYOUT_START, LAYOUT_STOP
from .state import SETTLED, GuardAnswer, ReadGuard, check_leaf_depth
from .structure import StructureReads

__all__ = [
    "LAYOUT_START",
    "LAYOUT_STOP",
    "SETTLED",
    "Catalog",
    "GuardAnswer",
    "ReadGuard",
    "check_leaf_depth",
]


class Catalog(StructureReads):
    """The safety facts of one keyspace (module docstring). A transaction works on
    a :meth:`child` whose facts merge into the parent on :meth:`commit`."""
