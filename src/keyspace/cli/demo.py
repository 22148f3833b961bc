"""``keyspace demo``: a multi-tenant store, the naive scheme's collision next to
the safe schemes' encodings, and the scope tree."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import click
from rich.table import Table

from .. import open as open_keyspace
from ..errors import InvalidName
from ..schemes import AsciiHex, Delimited, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from ._console import out
from ._format import render_path
from .inspect_cmd import scope_tree

__all__ = ["demo"]

STORE_NAME = "keyspace.lmdb"

TENANTS: dict[str, dict[str, Any]] = {
    "acme": {
        "users": ["alice", "bob", "carol", "dave"],
        "audit": 6,
        "projects": {"apollo": 5, "gemini": 3},
    },
    "globex": {"users": ["erin", "frank"], "audit": 4, "projects": {"hammock": 2}},
    "initech": {"users": ["peter", "samir", "michael"], "audit": 3, "projects": {}},
}


def _fill(url: str) -> int:
    """Write the demo tenants in one transaction; return the number of keys."""
    written = 0
    with open_keyspace(url) as ks, ks.transaction() as tx:
        for tenant, parts in TENANTS.items():
            settings = tx.scope(tenant)
            settings[b"plan"] = b"enterprise" if tenant == "acme" else b"team"
            settings[b"region"] = b"eu-west"
            written += 2
            users = tx.scope(tenant, "users")
            for i, user in enumerate(parts["users"]):
                record = {"name": user, "role": "admin" if i == 0 else "member", "tenant": tenant}
                users[user.encode()] = json.dumps(record).encode()
                written += 1
            audit = tx.scope(tenant, "audit")
            for n in range(1, parts["audit"] + 1):
                audit[f"{n:04d}".encode()] = f"event {n} of {tenant}".encode()
                written += 1
            for project, tasks in parts["projects"].items():
                project_scope = tx.scope(tenant, "projects", project)
                project_scope[b"owner"] = parts["users"][0].encode()
                task_scope = project_scope.scope("tasks")
                for n in range(1, tasks + 1):
                    task_scope[f"t{n:03d}".encode()] = f"task {n} of {project}".encode()
                written += 1 + tasks
    return written


def _show_naive_collision() -> None:
    console = out()
    naive = Naive(allow_collisions=True)
    a = naive.encode(("foo",), b"bar")
    b = naive.encode(("fo",), b"obar")
    console.print("[bold]2. The naive scheme: concatenation collides[/bold]")
    console.print(f"   scope foo, key bar   → stored {a.hex()}  {a!r}")
    console.print(f"   scope fo,  key obar  → stored {b.hex()}  {b!r}")
    console.print(f"   same stored bytes: {'YES — one overwrites the other' if a == b else 'no'}")
    console.print()
    # An application that separates tenant and key with "|" by hand.
    with open_keyspace("memory:", scheme=naive) as ks:
        ks.scope("acme|")[b"users|alice"] = b'{"name": "alice", "secret": "acme-only"}'
        leaked = ks.scope("acme|users|").get(b"alice")
    console.print("   With a hand-made delimiter (tenant + '|' + key):")
    console.print("   tenant acme writes key users|alice → stored b'acme|users|alice'")
    console.print(f"   tenant 'acme|users' reads key alice  → {leaked!r}")
    console.print(
        "   [bold red]a tenant whose name holds the delimiter reads another tenant's data[/bold red]"
    )
    with open_keyspace("memory:") as ks:
        ks.scope("acme")[b"users|alice"] = b"secret"
        safe = ks.scope("acme|users").get(b"alice")
    console.print(f"   same reads with the tuple scheme     → {safe!r} (nothing leaks)")
    console.print()


SAFE_SCHEMES: tuple[Scheme, ...] = (
    TupleScheme(),
    LengthPrefixed(),
    AsciiHex(),
    Sublevel(),
    ScopeHash(),
    Delimited(":"),
)

NOTE_USERS = ("rod", "rod.vagg", "rod1977", "roderick")
"""The users of the LevelDB namespacing note's session store."""


def _show_safe_encodings() -> None:
    console = out()
    console.print("[bold]3. Safe schemes: the same two keys, distinct stored bytes (hex)[/bold]")
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("   scheme", no_wrap=True)
    table.add_column("scope, key", no_wrap=True)
    table.add_column("stored key (hex)", overflow="fold")
    table.add_column("distinct", no_wrap=True)
    for scheme in (Naive(allow_collisions=True), *SAFE_SCHEMES):
        a = scheme.encode(("foo",), b"bar")
        b = scheme.encode(("fo",), b"obar")
        mark = "[green]yes[/green]" if a != b else "[red]NO[/red]"
        table.add_row(f"   {scheme.name}", "foo, bar", a.hex(), "")
        table.add_row("", "fo, obar", b.hex(), mark, end_section=True)
    console.print(table)
    console.print()


def _show_delimiters() -> None:
    """The LevelDB namespacing note: the order each separator gives, and the
    injection the Delimited scheme refuses."""
    console = out()
    console.print("[bold]4. Hand-made delimiters (the LevelDB namespacing note)[/bold]")
    console.print(f"   users {', '.join(NOTE_USERS)}; stored order of '<user><SEP>last_login' per separator:")
    for separator in (":", "!", "~", "\x00"):
        with open_keyspace("memory:", scheme=Delimited(separator)) as ks:
            for user in NOTE_USERS:
                ks.scope(user)[b"last_login"] = b"1367488445080"
            stored = [k for k, _ in ks.store.scan(b"", None)]
        users = [k.split(separator.encode("latin-1"), 1)[0].decode() for k in stored]
        verdict = "[green]name order[/green]" if users == sorted(NOTE_USERS) else "[red]not name order[/red]"
        console.print(f"   {separator!r:>6}  {'  '.join(users):<36} {verdict}", highlight=False)
    console.print("   only '\\x00' keeps every name in order ('!' fails for names with a byte below '!')")
    with open_keyspace("memory:", scheme=Delimited("|")) as ks:
        ks.scope("acme")[b"users|alice"] = b"acme-only"
        try:
            ks.scope("acme|users").get(b"alice")
            refused = "read"
        except InvalidName as exc:
            refused = f"refused: InvalidName: {exc}"
    console.print("   Delimited('|'): tenant acme writes key users|alice → stored b'acme|users|alice'")
    console.print(f"   tenant 'acme|users' reads key alice  → {refused}", markup=False)
    console.print()


@click.command(
    epilog="""\b
Examples:
  keyspace demo                 # writes demo-data/keyspace.lmdb
  keyspace demo /tmp/ks-demo    # another directory
  keyspace inspect demo-data/keyspace.lmdb
"""
)
@click.argument("directory", default="demo-data", type=click.Path(file_okay=False))
def demo(directory: str) -> None:
    """Build a multi-tenant LMDB store in DIRECTORY and show what keyspace does.

    Writes DIRECTORY/keyspace.lmdb (removed first, so the demo can be re-run):
    three tenants with settings, users, an audit log and nested projects, in the
    tuple scheme. Then shows the naive scheme's collisions, the distinct
    encodings of the safe schemes, the sort orders of hand-made delimiters and
    the injection the delimited scheme refuses, and the store's scope tree with
    key counts.
    """
    console = out()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, STORE_NAME)
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    written = _fill(path)
    console.print("[bold]1. A multi-tenant store[/bold]")
    console.print(
        f"   wrote {written} keys for {len(TENANTS)} tenants to {path} (LMDB, tuple scheme)", markup=False
    )
    with open_keyspace(path, create=False) as ks:
        alice = ks.scope("acme", "users")[b"alice"]
        console.print(f"   acme / users / alice = {alice.decode()}")
        scopes = ", ".join(render_path((c,), typed=True) for c in ks.scope("acme").scopes())
        console.print(f"   scopes of acme: {scopes}")
    console.print()
    _show_naive_collision()
    _show_safe_encodings()
    _show_delimiters()
    console.print("[bold]5. The scope tree[/bold] (keys and bytes as stored; own and with the subtree)")
    with open_keyspace(path, create=False) as ks:
        tree, _skipped = scope_tree(ks)
        console.print(tree.table("", typed=True))
    console.print()
    console.print(f"Next: keyspace inspect {path}   ·   keyspace scan {path} acme users", markup=False)
