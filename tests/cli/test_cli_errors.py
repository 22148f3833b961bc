"""The command line under bad input: one error line and exit 1, quiet closed
pipes, strict JSON, typed keys that round-trip, read commands that change nothing."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.cli import main

CLI = [sys.executable, "-m", "keyspace.cli"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(code: int, err: str) -> str:
    lines = err.splitlines()
    assert code == 1, (code, err)
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert "Traceback" not in err and "Usage:" not in err
    return lines[0]


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"lmdb://{tmp_path / 'data.lmdb'}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"
    return url


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["bogus"],
        ["scan"],
        ["get", "{url}", "a"],
        ["scan", "{url}", "a", "--limit", "-1"],
        ["scan", "{url}", "a", "--prefix", "x", "--start", "y"],
        ["delete", "{url}", "a"],
        ["decode", "--scheme", "tuple", "zz"],
        ["get", "{url}", "a", "--key", "k", "--no-such-option"],
        ["schemes", "extra"],
    ],
)
def test_usage_errors_are_one_error_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], store: str, args: list[str]
) -> None:
    code, _, err = _run(capsys, *(a.format(url=store) for a in args))
    _one_error_line(code, err)


@pytest.mark.parametrize(
    "key",
    [
        "{bad",
        "[" * 100_000 + "]" * 100_000,
        '{"x": 1}',
        '{"float": "abc"}',
        '{"uuid": "not-a-uuid"}',
        '{"hex": "zz"}',
        "NaN-ish",
    ],
)
def test_bad_json_keys_are_one_error_line(capsys: pytest.CaptureFixture[str], store: str, key: str) -> None:
    code, _, err = _run(capsys, "get", store, "a", "--json", "--key", key)
    line = _one_error_line(code, err)
    assert len(line) < 400


def test_unexpected_errors_are_one_line_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "scan", "lmdb://" + str(tmp_path / "missing" / "deeper"), "a")
    line = _one_error_line(code, err)
    assert "no store" in line or "does not exist" in line


@pytest.mark.parametrize(
    "command", ["scan {url} a", "scan {url} a --json", "scan {url} a --hex", "inspect {url}"]
)
def test_output_into_a_closed_pipe_exits_0(tmp_path: Path, command: str) -> None:
    url = f"lmdb://{tmp_path / 'big'}"
    with keyspace.open(url) as ks:
        ks.scope("a").update({b"k%06d" % i: b"v" * 64 for i in range(30_000)})
        for i in range(300):
            ks.scope(f"s{i:03d}")[b"k"] = b"v"
    proc = subprocess.Popen(
        [*CLI, *shlex.split(command.format(url=url))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "error" not in err


def _strict(line: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def test_json_output_is_strict_and_reads_back(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'f.lmdb'}"
    keys: list[Any] = [math.nan, math.inf, -math.inf, 1.5, -0.0, ("x", math.nan), "text", b"\x00\xff", 7]
    with keyspace.open(url) as ks:
        for n, key in enumerate(keys):
            ks.scope("f")[key] = b"value %d" % n
    code, out, err = _run(capsys, "scan", url, "f", "--json")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(keys)
    for line in lines:
        doc = _strict(line)
        code, value, err = _run(capsys, "get", url, "f", "--json", "--key", json.dumps(doc["key"]))
        assert code == 0, err
        assert _strict(value)["value"] == doc["value"]


def test_typed_keys_printed_by_scan_are_accepted_by_get(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"lmdb://{tmp_path / 't.lmdb'}"
    keys: list[Any] = [
        3,
        -12,
        1.5,
        math.nan,
        math.inf,
        "text",
        "int:3",
        b"int:3",
        b"(paren",
        b"plain",
        None,
        True,
        uuid.UUID(int=7),
        ("a", 3, b"b", ("c", 1.25)),
        (),
    ]
    with keyspace.open(url) as ks:
        for n, key in enumerate(keys):
            ks.scope("t")[key] = b"value %d" % n
    code, out, err = _run(capsys, "scan", url, "t")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(keys)
    for line in lines:
        printed, value = line.split("\t")
        code, got, err = _run(capsys, "get", url, "t", "--key", printed)
        assert code == 0, (printed, err)
        assert got.rstrip("\n") == value, printed


@pytest.mark.parametrize("scheme", ["sublevel", "asciihex", "length-prefixed"])
def test_bytes_keys_with_prefix_text_round_trip_in_byte_schemes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scheme: str
) -> None:
    """Every key ``scan`` prints reads back in ``get`` and ``delete``: text that
    starts with a prefix (printed after ``bytes:``), and bytes that are no
    UTF-8 text (printed as ``hex:``, which the byte schemes read literally
    before)."""
    url = f"lmdb://{tmp_path / 's.lmdb'}"
    keys = [b"int:3", b"plain", b"hex:41", b"\xff\x01", b"tab\there", b"bytes:x"]
    with keyspace.open(url, scheme=scheme) as ks:
        for i, key in enumerate(keys):
            ks.scope("s")[key] = b"v%d" % i
    code, out, err = _run(capsys, "scan", url, "s", "--scheme", scheme)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(keys)
    for line in lines:
        printed, value = line.split("\t")
        code, got, err = _run(capsys, "get", url, "s", "--key", printed, "--scheme", scheme)
        assert code == 0 and got.rstrip("\n") == value, (printed, err)
    for line in lines:
        code, _, err = _run(capsys, "delete", url, "s", "--key", line.split("\t")[0], "--scheme", scheme)
        assert code == 0, err
    with keyspace.open(url, scheme=scheme) as ks:
        assert list(ks.scope("s").keys()) == []


def test_scan_help_examples_work_as_printed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "demo", str(tmp_path / "demo"))
    assert code == 0, err
    os.rename(tmp_path / "demo" / "keyspace.lmdb", tmp_path / "data.lmdb")
    code, text, _ = _run(capsys, "scan", "--help")
    examples = [line.strip() for line in text.splitlines() if line.strip().startswith("keyspace scan ")]
    assert len(examples) >= 3
    for example in examples:
        proc = subprocess.run(
            [*CLI, *shlex.split(example, comments=True)[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, (example, proc.stderr)
        assert proc.stdout.strip(), example


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("command", ["inspect {url}", "scan {url} a", "get {url} a --key k"])
def test_read_commands_change_nothing_on_what_is_not_a_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"\xff\xd8 jpeg")
    app = tmp_path / "app.db"
    conn = sqlite3.connect(app)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = _tree(tmp_path)
    for url in (str(photos), f"sqlite://{app}", f"leveldb://{photos}", f"rocksdb://{photos}"):
        code, _, err = _run(capsys, *shlex.split(command.format(url=url)))
        assert "not a" in _one_error_line(code, err)
    assert _tree(tmp_path) == before


def test_a_path_the_command_cannot_use_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``keyspace demo /proc/nope`` ended with "unexpected FileNotFoundError"."""
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    code, _, err = _run(capsys, "demo", str(blocked / "demo"))
    line = _one_error_line(code, err)
    assert line.startswith(f"error: cannot use {blocked}") and "unexpected" not in line, line


def test_a_store_of_unknown_layout_names_the_commands_depth_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The refusal named only the Python parameter (leaf_depth=N)."""
    import lmdb

    env = lmdb.open(str(tmp_path / "db"))
    with env.begin(write=True) as txn:
        txn.put(b"\x00\x01ak", b"v")  # a LengthPrefixed key written with no layout record
    env.close()
    code, _, err = _run(capsys, "scan", str(tmp_path / "db"), "a", "--scheme", "length-prefixed")
    assert code == 1 and "the command's --depth N" in err
    code, out, err = _run(
        capsys, "scan", str(tmp_path / "db"), "a", "--scheme", "length-prefixed", "--depth", "1"
    )
    assert code == 0 and out.endswith("\tv\n"), err
