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
