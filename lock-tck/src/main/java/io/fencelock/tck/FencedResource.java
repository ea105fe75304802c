package io.fencelock.tck;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The downstream check that makes fencing tokens worth having (the downstream check of the bigserial design): a resource that accepts
 * a write only if its token is at least the highest token it has accepted, so a holder that lost
 * its lease without knowing it (a paused or cut-off process) cannot overwrite a newer holder's work.
 * Equal tokens are accepted because one holder writes many times with the same token.
 */
public final class FencedResource {
    private final ReentrantLock lock = new ReentrantLock();
    private long highestToken;
    private long accepted;
    private long rejected;

    /** Applies a write carrying {@code token}; returns whether it was accepted. */
    public boolean write(long token) {
        lock.lock();
        try {
            if (token < highestToken) {
                rejected++;
                return false;
            }
            highestToken = token;
            accepted++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    public long highestToken() {
        lock.lock();
        try {
            return highestToken;
        } finally {
            lock.unlock();
        }
    }

    public long acceptedWrites() {
        lock.lock();
        try {
            return accepted;
        } finally {
            lock.unlock();
        }
    }

    public long rejectedWrites() {
        lock.lock();
        try {
            return rejected;
        } finally {
            lock.unlock();
        }
    }
}
