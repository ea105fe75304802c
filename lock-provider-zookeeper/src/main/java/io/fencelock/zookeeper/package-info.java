/**
 * The ZooKeeper provider: one ephemeral znode per held lock, created in one request and owned by a
 * session of the lock's TTL class; the fencing token is the znode's creation zxid. Because the
 * ZooKeeper client keeps sessions alive by itself, the backend deletes its own locks whose TTL ran
 * out without a renewal. See the module's README.
 */
package io.fencelock.zookeeper;
