package io.fencelock.bench;

import java.time.Duration;

/**
 * The single statement or command at the core of a provider's acquire, on a table or keys of the
 * same shape but its own: the physical limit the library's overhead is measured against.
 */
public interface RawPrimitive extends AutoCloseable {

    /** One round trip: takes {@code name} for {@code owner} if free or expired. */
    boolean tryAcquire(String name, String owner, Duration ttl) throws Exception;

    /** One round trip: frees {@code name} if {@code owner} holds it. */
    void release(String name, String owner) throws Exception;

    @Override
    void close() throws Exception;
}
