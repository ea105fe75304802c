/**
 * The comparison run: every backend side by side (guarantees, latency, throughput, hand-off, renewal,
 * takeover, leader failover, scale) against the raw primitives and peer libraries, written as a report
 * for a design review. See the module's README.
 */
package io.fencelock.bench;
