"""``python -m keyspace.cli``: the ``keyspace`` command."""

from . import main

main()
