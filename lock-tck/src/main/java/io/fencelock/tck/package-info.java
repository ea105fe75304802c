/**
 * The fencelock conformance kit: subclass {@link io.fencelock.tck.LockBackendContract} with a
 * {@link io.fencelock.tck.BackendFixture} to run every property against a real backend, under faults,
 * and write the guarantee matrix. See the module's README for the properties and how each is judged.
 */
package io.fencelock.tck;
