"""The Python examples of README.md and docs/ run as written (in an empty
working directory; the scoped-heed example with its environment path pointed
there), and the small backend of docs/writing-a-backend.md passes the store
conformance suite except where the document says it does not."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keyspace.errors import StoreClosed
from keyspace.testing import StoreSuite

ROOT = Path(__file__).resolve().parent.parent


def _blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(encoding="utf-8"), re.S)


def _run(code: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": name}
    exec(compile(code, name, "exec"), namespace)
    return namespace


EXAMPLES = [
    ("README.md", 0),  # quick start
    ("docs/collections.md", 0),  # collections over a scope
    ("docs/collections.md", 1),  # CosmWasm definitions
    ("docs/scoped-heed.md", 0),  # scoped-heed environments
]


@pytest.mark.parametrize(("doc", "index"), EXAMPLES, ids=[f"{d}#{i}" for d, i in EXAMPLES])
def test_the_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: str, index: int
) -> None:
    monkeypatch.chdir(tmp_path)
    code = _blocks(doc)[index]
    if doc == "docs/scoped-heed.md":
        (tmp_path / "env").mkdir()
        code = code.replace('"/srv/env"', repr(str(tmp_path / "env")))
    namespace = _run(code, f"{doc}#{index}")
    for value in namespace.values():  # close what the example left open
        close = getattr(value, "close", None)
        if callable(close) and type(value).__name__ == "Keyspace":
            close()


def test_the_quick_start_prints_what_its_comments_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    _run(_blocks("README.md")[0], "README.md#0")
    out = capsys.readouterr().out.splitlines()
    assert out == ["['audit', 'users']", "[b'bob', b'alice']"]


def _dict_store() -> Callable[[], Any]:
    code = next(b for b in _blocks("docs/writing-a-backend.md") if "class DictStore" in b)
    return _run(code, "writing-a-backend.md#DictStore")["DictStore"]  # type: ignore[no-any-return]


class TestTheDocumentedDictStore(StoreSuite):
    """The document's ``DictStore``, as printed, through the conformance suite."""

    model_examples = 10

    @pytest.fixture
    def make_store(self) -> Callable[..., Any]:
        factory = _dict_store()

        def make(url: str | None = None) -> Any:
            return factory()

        return make

    def test_snapshot_isolation(self, make_store: Callable[..., Any]) -> None:  # type: ignore[override]
        """The one difference the document states: its snapshot view stays
        readable after its block (a real adapter ends it: StoreClosed)."""
        store = make_store()
        store.put(b"a", b"1")
        with store.snapshot() as snap:
            store.put(b"a", b"2")
            assert snap.get(b"a") == b"1"
        assert snap.get(b"a") == b"1"

    def test_scans_end_with_their_block(self, make_store: Callable[..., Any]) -> None:  # type: ignore[override]
        """The document's second stated difference: the scans its snapshots and
        transactions gave out read on after the block, over the copy of the data
        their view read (a real adapter's raise StoreClosed)."""
        store = make_store()
        store.write([(b"a", b"1"), (b"b", b"2")])
        for begin in (store.snapshot, store.transaction):
            with begin() as view:
                items = view.scan()
                assert next(items) == (b"a", b"1")
            store.put(b"c", b"3")
            assert list(items) == [(b"b", b"2")]
            store.delete(b"c")

    def test_transaction_scans_of_its_own_writes_end_with_it(  # type: ignore[override]
        self, make_store: Callable[..., Any]
    ) -> None:
        """Its transactions' pending writes are the overlay transaction's, handed
        out in pages that end with it; only the copy beneath reads on."""
        store = make_store()
        with store.transaction() as tx:
            tx.put_many([(b"o%04d" % i, b"mine") for i in range(100)])
            items = tx.scan(b"o", b"p")
            assert next(items) == (b"o0000", b"mine")
        with pytest.raises(StoreClosed, match="ended"):
            list(items)

    def test_reads_of_an_ended_view_raise(self, make_store: Callable[..., Any]) -> None:  # type: ignore[override]
        """The stated difference again: its snapshot view stays readable after its
        block; its transaction (the overlay transaction) refuses every read."""
        store = make_store()
        store.put(b"a", b"1")
        with store.snapshot() as snap:
            pass
        assert snap.get(b"a") == b"1" and list(snap.scan()) == [(b"a", b"1")]
        with store.transaction() as tx:
            pass
        for call in (lambda: tx.get(b"a"), lambda: list(tx.scan()), lambda: tx.count()):
            with pytest.raises(StoreClosed):
                call()
