/**
 * The MySQL / MariaDB provider: one {@code INSERT ... ON DUPLICATE KEY UPDATE} per grant that computes
 * the token before it overwrites the owner, and a token floor that keeps tokens rising across purges.
 * No release signal: waiters poll. See the module's README.
 */
package io.fencelock.mysql;
