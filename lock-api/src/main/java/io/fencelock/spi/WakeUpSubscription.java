package io.fencelock.spi;

/** A subscription to release signals of one lock name; closing it stops the callbacks. */
public interface WakeUpSubscription extends AutoCloseable {
    WakeUpSubscription NONE = () -> {};

    @Override
    void close();
}
