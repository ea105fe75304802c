package io.fencelock;

/** A task run while holding a lease, see {@link LockClient#runExclusively}. */
@FunctionalInterface
public interface LeaseTask<T> {
    T run(Lease lease) throws Exception;
}
