package io.fencelock;

/** The life of a lease: held, then either released by its owner or lost. Both ends are final. */
public enum LeaseState {
    HELD,
    RELEASED,
    LOST
}
