/**
 * Seeded random multi-client schedules (the TCK's own generator, specialised for concurrent lock
 * schedules) and the shrinker that reduces a failing one to a minimal schedule to replay by its seed.
 */
package io.fencelock.tck.schedule;
