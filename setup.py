"""The part of the build that pyproject.toml does not state: the optional C decoder
of ``keyspace.tuples`` (``keyspace._tuples_accel``).

``optional=True``: without a C compiler or the Python headers the install still
succeeds (setuptools prints a warning) and ``keyspace.tuples`` uses its pure-Python
decoder, which gives the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("keyspace._tuples_accel", sources=["src/keyspace/_tuples_accel.c"], optional=True),
    ]
)
