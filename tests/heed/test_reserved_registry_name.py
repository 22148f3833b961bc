"""The scoped-heed database name ``__global_scope_metadata`` is refused.

That is the name of the environment's scope registry, so a scoped database of that
name had the registry as its default scope: reading it listed the registry, and a
default-scope write put an entry in it (one naming another scope, say), which
every database of the environment then read as the truth about its scopes; the
open also created ``__global_scope_metadata_scoped``. The opener and the command
now refuse that name with :class:`InvalidArgument` and leave the environment as
it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run
from _heed_env import data_digest, reference_env

from keyspace import scoped_heed
from keyspace.errors import InvalidArgument

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def env(tmp_path: Path) -> Path:
    return reference_env(tmp_path)


@pytest.mark.parametrize("readonly", [False, True])
def test_the_registry_is_not_a_scoped_database(env: Path, readonly: bool) -> None:
    before = data_digest(env)
    refused = "'__global_scope_metadata' is the environment's scope registry"
    with pytest.raises(InvalidArgument, match=refused):
        scoped_heed.open(env, scoped_heed.REGISTRY_DB, readonly=readonly)
    assert data_digest(env) == before
    with scoped_heed.open(env, "cache", readonly=True) as ks:
        assert "tenant1" in ks.scope_names()


@pytest.mark.parametrize(
    "args",
    [
        ("put", "{env}", "--scoped-heed", "__global_scope_metadata", "--key", "abcd", "--value", "x"),
        ("scan", "scoped-heed://{env}?name=__global_scope_metadata"),
    ],
)
def test_the_command_refuses_the_registry_as_a_database(env: Path, args: tuple[str, ...]) -> None:
    before = data_digest(env)
    proc = run(*(a.format(env=env) for a in args), ok=False)
    assert proc.returncode == 1 and "scope registry" in proc.stderr, proc.stderr
    assert data_digest(env) == before
