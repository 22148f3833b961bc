"""``keyspace get`` / ``delete`` of a text key that misses, where the scope
holds the same text as a str key (a program wrote it with ``key="str"``), say
which key exists and how to name it."""

from __future__ import annotations

from pathlib import Path

from _cli import run

import keyspace


def test_get_and_delete_name_the_str_key(tmp_path: Path) -> None:
    url = str(tmp_path / "s.lmdb")
    with keyspace.open(url) as ks:
        ks.scope("acme", key="str")["user1"] = b"v"
    for command in ("get", "delete"):
        miss = run(command, url, "acme", "--key", "user1", ok=False)
        assert miss.returncode == 1
        assert "no key 'user1' in scope acme" in miss.stderr
        assert "a str key 'user1' exists: this scope's keys are str; give --key str:user1" in miss.stderr
    assert run("get", url, "acme", "--key", "str:user1").stdout == "v\n"
    plain = run("get", url, "acme", "--key", "nobody", ok=False)
    assert "exists" not in plain.stderr
