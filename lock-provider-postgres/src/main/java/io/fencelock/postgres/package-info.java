/**
 * The PostgreSQL provider (the reference): one autocommit statement per operation on a lock table, tokens
 * from a {@code CACHE 1} sequence drawn after the row lock, a per-name advisory lock that keeps purges
 * away from acquires in flight, and {@code LISTEN/NOTIFY} wake-ups. See the module's README.
 */
package io.fencelock.postgres;
