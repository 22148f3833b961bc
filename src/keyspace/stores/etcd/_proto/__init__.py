"""Generated etcd v3 wire definitions (see README.md); not a public API."""
