"""A scoped-heed database answers the whole public scope API as the other schemes do.

The calls of ``test_schemes_differential`` (point reads and writes,
``pop``/``popitem``/``setdefault``/``update``, views and ``==``, ranged and
prefixed scans, ``clear_range``, ``drop``, ``scopes()``, ``subtree()``,
transactions, snapshots) run on a scoped-heed LMDB environment
(:func:`keyspace.scoped_heed.open`: the default scope and named scopes in their
own LMDB databases, the names in scoped-heed's registry) and on the plain model;
a reopen closes the environment and opens it again, so every fact comes from its
databases. Both bytes builders: ``raw_bytes`` (values stored as they are) and
``bytes_keys`` (values in bincode, so the raw comparison is by stored key).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from test_schemes_differential import KEYS, Model, Runner, ancestors, calls

import keyspace.scoped_heed as scoped_heed
from keyspace.schemes.scoped_heed import REGISTRY_TAG

pytest.importorskip("lmdb")

PATHS: list[tuple[Any, ...]] = [(), ("a",), ("ab",), ("b",)]


class _KeysModel(Model):
    """The model's stored keys (a bincode value is not the model's value)."""

    def raw(self) -> dict[bytes, bytes]:
        return dict.fromkeys(super().raw(), b"")

    def copy(self) -> _KeysModel:
        other = _KeysModel(self.scheme, self.paths)
        other.data = {p: dict(d) for p, d in self.data.items()}
        return other


class _HeedRunner(Runner):
    def __init__(self, directory: Path, api: str) -> None:
        self.directory, self.api = directory, api
        ks = scoped_heed.open(directory, "db", api=api)
        super().__init__(ks, _KeysModel(ks.scheme, PATHS), ancestors(PATHS), KEYS)

    def store_raw(self) -> dict[bytes, bytes]:
        """Every stored key but scoped-heed's registry entries."""
        return {k: b"" for k, _ in self.ks.store.scan(b"", None) if not k.startswith(REGISTRY_TAG)}

    def run(self, call: tuple[Any, ...]) -> None:
        if call[0] != "reopen":
            super().run(call)
            return
        self.ks.close()
        self.ks = scoped_heed.open(self.directory, "db", api=self.api)
        self.check_all(self.ks, self.model)
        assert self.store_raw() == self.model.raw()


@pytest.mark.parametrize("api", ["raw_bytes", "bytes_keys"])
def test_scoped_heed_answers_as_the_model(api: str, tmp_path: Path) -> None:
    count = iter(range(10**6))

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(script=calls(len(PATHS), len(ancestors(PATHS)), KEYS))
    def check(script: list[tuple[Any, ...]]) -> None:
        directory = tmp_path / f"env{next(count)}"
        directory.mkdir()
        runner = _HeedRunner(directory, api)
        try:
            for call in script:
                runner.run(call)
        finally:
            runner.ks.close()

    check()
