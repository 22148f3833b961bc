"""``keyspace inspect`` into a pipe or a file prints its scope table as plain lines
drawn without rich: they are exactly what rich prints of the same table there
(every name whole, the console as wide as the widest row), for any tree, title
and ``--levels``; a name or title holding anything but printable ASCII is left
to rich (whose cell widths decide its columns)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from _cli import run
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import keyspace
from keyspace.cli._tree import ScopeTree
from keyspace.cli.inspect_cmd import scope_tree


def _rich_prints(tree: ScopeTree, title: str, typed: bool, levels: int | None) -> str:
    """What rich prints of ``tree.table`` into a file, as inspect prints it there."""
    buf = io.StringIO()
    console = Console(file=buf, highlight=False, soft_wrap=True, emoji=False)
    assert not console.is_terminal and console.color_system is None
    table = tree.table(title, typed=typed, levels=levels)
    wide = console.options.update_width(1 << 20)
    console.width = max(console.width, console.measure(table, options=wide).maximum)
    console.print(table)
    return buf.getvalue()


_ASCII = st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=30)
_ANY = st.text(min_size=1, max_size=12)
_COMPONENT = st.one_of(_ASCII, _ANY, st.binary(min_size=1, max_size=6), st.integers(-(10**12), 10**12))
_ENTRIES = st.lists(
    st.tuples(
        st.lists(_COMPONENT, max_size=4).map(tuple),
        st.integers(0, 10**13),
        st.integers(1, 10**7),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(
    entries=_ENTRIES,
    title=st.one_of(_ASCII, _ANY, st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=200)),
    typed=st.booleans(),
    levels=st.one_of(st.none(), st.integers(0, 4)),
)
def test_the_plain_lines_are_what_rich_prints(
    entries: list[tuple[tuple[object, ...], int, int]], title: str, typed: bool, levels: int | None
) -> None:
    tree = ScopeTree()
    for path, size, keys in entries:
        tree.add(path, size, keys)
    lines = tree.plain_lines(title, typed=typed, levels=levels)
    names = [title] + [row[2] for row in tree._rows(typed, levels)]
    if all(name.isascii() and name.isprintable() for name in names):
        assert lines is not None
        assert "\n".join(lines) + "\n" == _rich_prints(tree, title, typed, levels)
    else:
        assert lines is None


def test_the_command_prints_the_table_rich_would(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        for t in range(3):
            for name in ("users", "audit", "x" * 90):
                ks.scope(f"tenant{t}", name).update({b"k%d" % i: b"v" * i for i in range(t * 5 + 1)})
        ks.scope()[b"own"] = b"root's"
    printed = run("inspect", url).stdout
    with keyspace.open(url, readonly=True) as ks:
        tree, _ = scope_tree(ks)
        title = f"{ks.url}  ({ks.scheme!r})"
    expected = _rich_prints(tree, title, True, None)
    assert printed.startswith(expected) and len(expected.splitlines()) == 1 + 1 + 1 + 3 + 3 * 3
    assert printed[len(expected) :].startswith("reserved (scheme record")


def test_inspect_into_a_pipe_imports_no_progress_bar(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"
    code = (
        "import sys\nfrom keyspace.cli import main\n"
        f"code = main(['inspect', {url!r}])\n"
        "print('\\n'.join(sys.modules), file=sys.stderr)\nsys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "(root)" in done.stdout
    loaded = set(done.stderr.split())
    assert "rich.progress" not in loaded  # imported when a bar is first shown
