package io.fencelock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Lease ids: random version-4 UUIDs, as {@link UUID#randomUUID()} makes them, but drawn from AES-256 in
 * counter mode under a key and counter start taken from {@link SecureRandom}, a block of ids at a time,
 * instead of one SecureRandom call per id (which cost a fifth of an acquire on a store that answers at
 * once). AES-CTR under a secret random key is a cryptographically secure generator (NIST SP 800-90A's
 * CTR_DRBG is built on it): an observer of any number of ids cannot tell the next one. Distinct counter
 * blocks under one key encrypt to distinct blocks, so within a key ids repeat only as often as random
 * 122-bit values do; the key is drawn afresh every {@link #IDS_PER_KEY} ids, far inside AES's limits.
 * Where the JDK lacks AES/CTR, ids come from {@link UUID#randomUUID()}.
 */
final class LeaseIds {
    /** Ids per block of key stream. */
    static final int IDS_PER_BLOCK = 64;
    /** Ids under one key before a new key is drawn. */
    static final long IDS_PER_KEY = 1L << 24;

    static final LeaseIds SHARED = new LeaseIds(IDS_PER_KEY);
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final long idsPerKey;
    private final ReentrantLock lock = new ReentrantLock();
    private final byte[] zeros = new byte[16 * IDS_PER_BLOCK];
    private final byte[] stream = new byte[16 * IDS_PER_BLOCK];
    private SecureRandom keys; // guarded by lock, made on first use
    private Cipher cipher; // guarded by lock; null before the first key and after a failure
    private boolean unavailable; // guarded by lock
    private int next = stream.length; // guarded by lock
    private long issuedUnderKey; // guarded by lock
    private int keysDrawn; // guarded by lock

    LeaseIds(long idsPerKey) {
        this.idsPerKey = idsPerKey;
        this.issuedUnderKey = idsPerKey;
    }

    /** A new lease id, in the canonical UUID form. */
    String next() {
        long msb;
        long lsb;
        lock.lock();
        try {
            if (next == stream.length && !refill()) {
                return UUID.randomUUID().toString();
            }
            msb = (long) LONGS.get(stream, next);
            lsb = (long) LONGS.get(stream, next + 8);
            next += 16;
        } finally {
            lock.unlock();
        }
        msb = (msb & ~0xF000L) | 0x4000L; // version 4 (random)
        lsb = (lsb & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L; // the IETF variant
        return new UUID(msb, lsb).toString();
    }

    /** How many keys were drawn so far (for the tests). */
    int keysDrawn() {
        lock.lock();
        try {
            return keysDrawn;
        } finally {
            lock.unlock();
        }
    }

    /** Under {@link #lock}: the next block of key stream; false when AES/CTR cannot be had here. */
    private boolean refill() {
        if (unavailable) {
            return false;
        }
        try {
            if (issuedUnderKey >= idsPerKey) {
                if (keys == null) {
                    keys = new SecureRandom();
                }
                byte[] key = new byte[32];
                byte[] counterStart = new byte[16];
                keys.nextBytes(key);
                keys.nextBytes(counterStart);
                Cipher c = Cipher.getInstance("AES/CTR/NoPadding");
                c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(counterStart));
                cipher = c;
                issuedUnderKey = 0;
                keysDrawn++;
            }
            if (cipher.update(zeros, 0, zeros.length, stream, 0) != stream.length) {
                throw new GeneralSecurityException("AES/CTR returned a short block");
            }
            issuedUnderKey += IDS_PER_BLOCK;
            next = 0;
            return true;
        } catch (GeneralSecurityException e) {
            Engine.LOG.warn(
                    "fencelock: AES/CTR is not available, lease ids come from UUID.randomUUID: {}", e.toString());
            unavailable = true;
            cipher = null;
            return false;
        }
    }
}
