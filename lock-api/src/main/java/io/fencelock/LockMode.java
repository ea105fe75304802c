package io.fencelock;

/** How a grant holds its name: the kind of lock, and for a read-write lock, which side. */
public enum LockMode {
    /** The mutex: one holder. */
    EXCLUSIVE,
    /** Some permits of a semaphore of N permits ({@link LockClient#semaphore}). */
    PERMITS,
    /** A reader of a read-write lock: any number of readers hold together, never with a writer. */
    READ,
    /** The writer of a read-write lock: alone. */
    WRITE
}
