/**
 * The etcd provider: acquire is one transaction on the key's {@code create_revision} (the fencing
 * token); locks ride on one etcd lease per client and TTL, kept alive in one round trip per tick;
 * waiters watch the key. See the module's README.
 */
package io.fencelock.etcd;
