/**
 * Micrometer meters for a {@link io.fencelock.LockClient}: see {@link io.fencelock.micrometer.LockMetrics}.
 */
package io.fencelock.micrometer;
