package io.fencelock;

/**
 * One hold of a {@link ReentrantLockHandle}: the grant it counts on, and a release that gives this
 * hold back (the last hold of the key releases the grant). Releasing twice does nothing more.
 */
public final class ReentrantHold implements AutoCloseable {
    private final ReentrantLockHandle handle;
    private final Object key;
    private final ManagedLease lease;
    private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

    ReentrantHold(ReentrantLockHandle handle, Object key, ManagedLease lease) {
        this.handle = handle;
        this.key = key;
        this.lease = lease;
    }

    /** The grant every hold of this key shares: the same lease id and token for all of them. */
    public Lease lease() {
        return lease;
    }

    /** The grant's fencing token. */
    public long fencingToken() {
        return lease.fencingToken();
    }

    /** Whether the grant is still valid (see {@link Lease#isValid()}). */
    public boolean isValid() {
        return lease.isValid();
    }

    /**
     * Gives this hold back; when it was the key's last, releases the grant. Returns whether this
     * call freed the lock on the backend.
     *
     * @throws LockBackendException as {@link Lease#release()}, for the last hold
     */
    public boolean release() {
        return released.compareAndSet(false, true) && handle.exit(key, lease) && lease.release();
    }

    /** As {@link #release()}; a backend failure is logged, not thrown. */
    @Override
    public void close() {
        if (released.compareAndSet(false, true) && handle.exit(key, lease)) {
            lease.close();
        }
    }
}
