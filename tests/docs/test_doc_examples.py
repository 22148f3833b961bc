"""Every code block of README.md and docs/ runs as written, and prints what the
page shows.

Conventions of the pages (a page that breaks one fails here):

- Every fenced block names its language. ```` ```python ```` and
  ```` ```console ```` blocks run; ```` ```text ```` blocks are output (or an
  illustration that is not a program: a table of bytes, a URL form); blocks in
  another language (``json``, ``rust``, ``javascript``, ``toml``, ``sh`` for a
  set-up step that installs software) are shown, not run.
- A page's ``python`` blocks run in order, in one namespace, as a reader pasting
  them one after another would run them, with a scratch directory as the working
  directory; files the examples read are shipped under ``docs/examples/`` and
  are there, under that path, in the scratch directory (as in the repository's
  root).
- A ``text`` block right after a ``python`` block (blank lines between them at
  most) is what that block prints, exactly (trailing spaces aside); a line
  ``...`` in it stands for any number of lines, and ``...`` in a line for any
  text in that line (a path of the scratch directory).
- In a ``console`` block, a line ``$ CMD`` is a command, run by the shell in the
  same scratch directory with the ``keyspace`` command of this interpreter first
  on ``PATH``; the lines after it, up to the next ``$``, are its output (stdout
  and stderr), compared as above. A command must exit with 0 unless its output
  shows an ``error:`` line.

- A page whose ``python`` or ``console`` blocks name ``ETCD`` runs against an
  etcd cluster with TLS and authentication on that this test starts for that
  page alone (one member on free loopback ports, stopped when the page is done;
  the page is skipped, saying why, where etcd cannot be had). ``ETCD`` (an
  environment variable of the blocks) holds its members (``host:port``), ``TLS``
  the URL's certificate files, ``cacert=ca.pem&cert=client.pem&key=client-key.pem``,
  which are in the scratch directory, and root's password is ``ROOT-PASSWORD``.
  The page says so to its reader.

The quick start of the README is also run as a new user runs it: pasted into a
script, run by a fresh interpreter in an empty directory, printing what the
README shows.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _etcd import auth_cluster
from _tls import make_pki

from keyspace.testing import StoreSuite
from keyspace.testing.etcd_cluster import ServerTLS

ROOT = Path(__file__).resolve().parents[2]
RUN = {"python", "console"}
SHOWN = {"text", "json", "rust", "javascript", "toml", "sh"}
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass
class Block:
    lang: str
    code: str
    line: int
    output: str | None = None  # the text block right after a python block


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found: list[Block] = []
    previous_end = None
    for match in _FENCE.finditer(text):
        lang = match.group(1).strip()
        line = text.count("\n", 0, match.start()) + 1
        between = text[previous_end : match.start()] if previous_end is not None else None
        follows = found and found[-1].lang == "python" and between is not None and not between.strip()
        if lang == "text" and follows:
            found[-1].output = match.group(2)
        else:
            found.append(Block(lang, match.group(2), line))
        previous_end = match.end()
    return found


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def same_output(shown: str, printed: str) -> bool:
    """Whether ``printed`` is the output ``shown`` (lines compared without their
    trailing spaces; a line ``...`` of ``shown`` takes any number of lines)."""
    want = [line.rstrip() for line in shown.rstrip("\n").split("\n")] if shown.strip() else []
    got = [line.rstrip() for line in printed.rstrip("\n").split("\n")] if printed.strip() else []
    pattern = "\n".join(".*?" if w == "..." else re.escape(w).replace(r"\.\.\.", "[^\n]*?") for w in want)
    pattern = pattern.replace("\n.*?\n", "(?:\n.*?)?\n")
    if pattern.startswith(".*?\n"):  # a first line ``...`` may stand for no line too
        pattern = "(?:.*?\n)?" + pattern[len(".*?\n") :]
    if pattern.endswith("\n.*?"):  # and so may a last one
        pattern = pattern[: -len("\n.*?")] + "(?:\n.*?)?"
    return re.fullmatch(pattern, "\n".join(got), re.S) is not None


def _scratch(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")
    return tmp_path


_ETCD = re.compile(r"\bETCD\b")
ROOT_PASSWORD = "ROOT-PASSWORD"
TLS_FILES = "cacert=ca.pem&cert=client.pem&key=client-key.pem"


def _needs_etcd(page: Path) -> bool:
    return any(_ETCD.search(b.code) for b in blocks(page) if b.lang in RUN)


@contextlib.contextmanager
def _etcd_for_the_page(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The TLS cluster with authentication on of the docstring, for one page:
    certificates made in the scratch directory, ``ETCD`` and ``TLS`` set."""
    pki = make_pki(cwd / "pki")
    for made in (pki.ca, pki.client_cert, pki.client_key):  # ca.pem, client.pem, client-key.pem
        shutil.copy(made, cwd / made.name)
    tls = ServerTLS(pki.ca, pki.server_cert, pki.server_key)
    with contextlib.closing(
        auth_cluster(tls=tls, client=(pki.client_cert, pki.client_key), password=ROOT_PASSWORD)
    ) as started:
        cluster = next(started)
        monkeypatch.setenv("ETCD", ",".join(cluster.endpoints))
        monkeypatch.setenv("TLS", TLS_FILES)
        yield


def _close_all(namespace: dict[str, Any]) -> None:
    for value in namespace.values():  # what the examples left open
        if type(value).__name__ in ("Keyspace", "ScopedHeed") and callable(getattr(value, "close", None)):
            with contextlib.suppress(Exception):
                value.close()


def _console(block: Block, where: str, cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["COLUMNS"] = "100"
    commands: list[tuple[str, list[str]]] = []
    for line in block.code.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"{where}: a console block begins with a line `$ COMMAND`"
            commands[-1][1].append(line)
    for command, shown in commands:
        proc = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        printed = proc.stdout
        expected = "\n".join(shown)
        assert proc.returncode == 0 or "error:" in expected, f"{where}: `{command}` failed:\n{printed}"
        assert same_output(expected, printed), (
            f"{where}: `{command}` printed:\n{printed}\nthe page shows:\n{expected}"
        )


PAGES = pages()


def test_there_are_pages_and_blocks() -> None:
    assert ROOT / "README.md" in PAGES
    assert sum(1 for page in PAGES for b in blocks(page) if b.lang == "python") >= 10


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_block_names_its_language(page: Path) -> None:
    for block in blocks(page):
        assert block.lang in RUN | SHOWN, (
            f"{_name(page)}:{block.line}: a code block of language {block.lang!r}; "
            f"give one of {sorted(RUN | SHOWN)} (see this test's docstring)"
        )


@pytest.mark.parametrize(
    "page",
    [pytest.param(page, marks=[pytest.mark.etcd] if _needs_etcd(page) else []) for page in PAGES],
    ids=_name,
)
def test_the_blocks_run_and_print_what_the_page_shows(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = _scratch(tmp_path)
    monkeypatch.chdir(cwd)
    namespace: dict[str, Any] = {"__name__": f"doc:{_name(page)}"}
    with contextlib.ExitStack() as services:
        if _needs_etcd(page):
            services.enter_context(_etcd_for_the_page(cwd, monkeypatch))
        _run_page(page, cwd, namespace)


def _run_page(page: Path, cwd: Path, namespace: dict[str, Any]) -> None:
    try:
        for block in blocks(page):
            where = f"{_name(page)}:{block.line}"
            if block.lang == "console":
                _console(block, where, cwd)
            if block.lang != "python":
                continue
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(block.code, where, "exec"), namespace)
            if block.output is not None:
                assert same_output(block.output, printed.getvalue()), (
                    f"{where} printed:\n{printed.getvalue()}\nthe page shows:\n{block.output}"
                )
    finally:
        _close_all(namespace)


def test_the_quick_start_pasted_into_a_script(tmp_path: Path) -> None:
    """A new user's path: the README's first python block, pasted into a file,
    run by a fresh interpreter in an empty directory, prints the text block the
    README shows after it."""
    first = next(b for b in blocks(ROOT / "README.md") if b.lang == "python")
    assert first.output is not None, "the quick start shows its output"
    (tmp_path / "quickstart.py").write_text(first.code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "quickstart.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert same_output(first.output, proc.stdout), proc.stdout


@pytest.mark.parametrize(
    ("shown", "printed", "same"),
    [
        ("a\nb\n", "a\nb\n", True),
        ("a\nb\n", "a\nc\n", False),
        ("a\n...\nz\n", "a\nb\nc\nz\n", True),
        ("a\n...\nz\n", "a\nz\n", True),
        ("a\n...\nz\n", "a\nb\n", False),
        ("", "", True),
        ("", "x\n", False),
        ("a  \n", "a\n", True),
        ("at lmdb:///.../x.lmdb\n", "at lmdb:///tmp/p/x.lmdb\n", True),
        ("at lmdb:///.../x.lmdb\n", "at lmdb:///tmp/p/y.lmdb\n", False),
        ("a\n...\n", "a\n", True),
        ("a\n...\n", "a\nb\nc\n", True),
        ("a\n...\n", "b\n", False),
        ("...\nz\n", "z\n", True),
        ("...\nz\n", "x\ny\nz\n", True),
        ("...\nz\n", "x\nzz\n", False),
    ],
)
def test_the_output_comparison(shown: str, printed: str, same: bool) -> None:
    assert same_output(shown, printed) is same


def _dict_store() -> Any:
    page = ROOT / "docs" / "writing-a-backend.md"
    code = next(b.code for b in blocks(page) if b.lang == "python" and "class DictStore" in b.code)
    namespace: dict[str, Any] = {"__name__": "writing-a-backend"}
    exec(compile(code, f"{_name(page)}#DictStore", "exec"), namespace)
    return namespace["DictStore"]


class TestTheDocumentedDictStore(StoreSuite):
    """The backend guide's ``DictStore``, as printed, passes the whole store
    conformance suite, with no exception."""

    model_examples = 10

    @pytest.fixture
    def make_store(self) -> Callable[..., Any]:
        factory = _dict_store()

        def make(url: str | None = None) -> Any:
            return factory()

        return make
