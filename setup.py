"""The part of the build that pyproject.toml does not state: the optional C modules,
``keyspace._tuples_accel`` (tuple encoding and decoding of the common cases) and
``keyspace.schemes._layouts_accel`` (key transforms and child steps of scheme
layouts, and ``Scheme.encode``), ``keyspace._bincode_accel`` (bincode's String
values), ``keyspace._scope_accel`` (the C base type of scopes: their fields and
point operations),
``keyspace._put_route_accel`` (the put route of a transaction with a feature on),
``keyspace._counter_records_accel`` (accounting's counter records updated in place),
``keyspace._changes_accel`` (the change log's parts encoded in one pass),
``keyspace._scan_plan_accel`` (the scan plan's short scan),
``keyspace.stores._pairs_accel`` (the put log of overlay transactions) and
``keyspace.stores._gate_accel`` (the count of calls in flight into an engine, and
an engine call with a view's errors).

``optional=True``: without a C compiler or the Python headers the install still
succeeds (setuptools prints a warning) and keyspace uses its pure-Python code,
which gives the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("keyspace._tuples_accel", sources=["src/keyspace/_tuples_accel.c"], optional=True),
        Extension("keyspace._scope_accel", sources=["src/keyspace/_scope_accel.c"], optional=True),
        Extension("keyspace._bincode_accel", sources=["src/keyspace/_bincode_accel.c"], optional=True),
        Extension(
            "keyspace.schemes._layouts_accel",
            sources=["src/keyspace/schemes/_layouts_accel.c"],
            optional=True,
        ),
        Extension("keyspace._put_route_accel", sources=["src/keyspace/_put_route_accel.c"], optional=True),
        Extension(
            "keyspace._counter_records_accel",
            sources=["src/keyspace/_counter_records_accel.c"],
            optional=True,
        ),
        Extension("keyspace._changes_accel", sources=["src/keyspace/_changes_accel.c"], optional=True),
        Extension("keyspace._scan_plan_accel", sources=["src/keyspace/_scan_plan_accel.c"], optional=True),
        Extension(
            "keyspace.stores._pairs_accel", sources=["src/keyspace/stores/_pairs_accel.c"], optional=True
        ),
        Extension(
            "keyspace.stores._gate_accel", sources=["src/keyspace/stores/_gate_accel.c"], optional=True
        ),
    ]
)
