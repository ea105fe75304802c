package io.fencelock.fencing;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The fence for a service that receives fencing tokens from its callers (HTTP, gRPC, a queue): a
 * thread-safe, per-resource check that admits a request only if its token is at least the highest
 * one admitted for that resource, and remembers it in a {@link TokenStore}.
 *
 * <pre>{@code
 * // caller, holding the lock
 * TokenGuard.putHeader(request::header, lease.fencingToken());    // Fencing-Token: 42
 *
 * // service
 * TokenGuard guard = TokenGuard.inMemory();
 * long token = TokenGuard.readHeader(request::getHeader).orElseThrow(...);
 * guard.runFenced("report:today", token, () -> storage.save(report)); // StaleTokenException if stale
 * }</pre>
 *
 * <p>{@link #admit} only orders admissions. When two requests for one resource can run at once,
 * a request admitted first may still write last; {@link #runFenced} runs the write while holding
 * the resource's place, one at a time per resource in this JVM. Across several service instances,
 * back the guard with a shared store and fence the write itself ({@link JdbcFence}, {@link RedisFence}).
 */
public final class TokenGuard {
    /** The conventional header (HTTP, gRPC metadata, message property) that carries a fencing token. */
    public static final String HEADER = "Fencing-Token";
    /** Stripes of the per-resource ordering in {@link #runFenced}: bounded memory, rare sharing. */
    private static final int STRIPES = 256;

    private final TokenStore store;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

    private TokenGuard(TokenStore store) {
        this.store = store;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    /** A guard that remembers tokens in this JVM's memory. */
    public static TokenGuard inMemory() {
        return new TokenGuard(TokenStore.inMemory());
    }

    /** A guard that remembers tokens in {@code store}. */
    public static TokenGuard backedBy(TokenStore store) {
        return new TokenGuard(Checks.notNull("token store", store));
    }

    /**
     * Admits {@code token} for {@code resource} if it is at least the highest admitted one, and
     * records it. Equal tokens are admitted: one holder writes many times with one token.
     *
     * @throws StaleTokenException when a higher token was admitted before
     */
    public void admit(String resource, long token) {
        if (!tryAdmit(resource, token)) {
            throw new StaleTokenException(
                    resource, token, store.current(resource).orElse(0));
        }
    }

    /** As {@link #admit}, but answers false instead of throwing for a stale token. */
    public boolean tryAdmit(String resource, long token) {
        Checks.key("resource key", resource, Integer.MAX_VALUE);
        Checks.token(token);
        return store.advance(resource, token) == token;
    }

    /**
     * Admits {@code token} and runs {@code work}, one at a time per resource in this JVM, so writes
     * happen in the order of their admission. The token stays recorded if {@code work} fails.
     *
     * @throws StaleTokenException when a higher token was admitted before; {@code work} did not run
     */
    public <T> T runFenced(String resource, long token, Callable<T> work) throws Exception {
        Checks.key("resource key", resource, Integer.MAX_VALUE);
        Checks.token(token);
        Checks.notNull("work", work);
        ReentrantLock stripe = stripes[Math.floorMod(resource.hashCode(), STRIPES)];
        stripe.lockInterruptibly();
        try {
            admit(resource, token);
            return work.call();
        } finally {
            stripe.unlock();
        }
    }

    /** The highest token admitted for {@code resource}, empty when none was. */
    public OptionalLong current(String resource) {
        return store.current(Checks.key("resource key", resource, Integer.MAX_VALUE));
    }

    /** {@code token} as a {@value #HEADER} value. */
    public static String headerValue(long token) {
        return Long.toString(Checks.token(token));
    }

    /** Sets the {@value #HEADER} header through {@code headers}, e.g. {@code requestBuilder::header}. */
    public static void putHeader(BiConsumer<String, String> headers, long token) {
        String value = headerValue(token);
        Checks.notNull("header setter", headers).accept(HEADER, value);
    }

    /**
     * Parses a {@value #HEADER} value: decimal digits of a positive long, surrounding blanks allowed.
     *
     * @throws IllegalArgumentException naming the value (shortened) and the rule
     */
    public static long parseHeader(String value) {
        Checks.notNull(HEADER + " header value", value);
        String v = value.strip();
        long token = 0;
        boolean valid = !v.isEmpty() && v.length() <= 19 && v.chars().allMatch(ch -> ch >= '0' && ch <= '9');
        if (valid) {
            try {
                token = Long.parseLong(v);
            } catch (NumberFormatException e) {
                valid = false;
            }
        }
        if (!valid || token <= 0) {
            throw new IllegalArgumentException(HEADER + " header value " + Checks.quote(value)
                    + " breaks the rule: the decimal digits of a positive long (1 to " + Long.MAX_VALUE + ")");
        }
        return token;
    }

    /**
     * Reads the {@value #HEADER} header through {@code headers}, e.g. {@code request::getHeader};
     * empty when absent.
     *
     * @throws IllegalArgumentException when present but not a positive long
     */
    public static OptionalLong readHeader(Function<String, String> headers) {
        String value = Checks.notNull("header getter", headers).apply(HEADER);
        return value == null ? OptionalLong.empty() : OptionalLong.of(parseHeader(value));
    }

    @Override
    public String toString() {
        return "TokenGuard[" + Objects.toString(store) + "]";
    }
}
