package io.fencelock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method only while this application holds a distributed lock, on one node at a time: the
 * lock is acquired before the method runs and released when it returns (or held on until
 * {@link #minHold()} has passed). Works on a bean's class or on an interface it implements, with
 * {@code @Scheduled}, and on virtual threads.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @Exclusive(name = "'nightly-report'", minHold = "5m")
 * public void nightlyReport() { ... }
 *
 * @Exclusive(name = "'report:' + #day", waitFor = "10s", type = "report")
 * public Report build(LocalDate day, Lease lease) { store.save(report, lease.fencingToken()); ... }
 * }</pre>
 *
 * <p>When the lock is not obtained within {@link #waitFor()} the method does not run and returns
 * {@code null} (an empty {@link java.util.Optional}, {@code false} or zero for those return types).
 * Inside the method the lease is a {@link io.fencelock.Lease} parameter (the caller passes
 * {@code null}; the advice puts the lease in) or {@link ExclusiveContext#currentLease()}. A lease lost
 * while the method runs interrupts its thread, and the call ends with
 * {@link io.fencelock.LeaseLostException} once the method returns. Not reentrant: an exclusive
 * method that calls another one with the same lock name on the same thread waits for itself.
 *
 * <p>Durations are Spring Boot's ({@code 500ms}, {@code 10s}, {@code 5m}, ISO-8601 {@code PT10S})
 * and may be {@code ${...}} placeholders; they are checked when the bean is created.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface Exclusive {

    /**
     * The lock name: a SpEL expression over the method's arguments ({@code #day}, {@code #p0}), e.g.
     * {@code "'report:' + #day"}; a constant name is quoted: {@code "'nightly-report'"}.
     */
    String name();

    /** How long to wait for the lock; {@code 0} (the default) skips the run when another node holds it. */
    String waitFor() default "0";

    /** The lease's TTL; empty: the client's ({@code fencelock.ttl}). */
    String ttl() default "";

    /**
     * Whether the watchdog renews the lease while the method runs (default true). With {@code false}
     * the lock is held at most {@link #ttl()}, ShedLock's {@code lockAtMostFor}: a longer run loses it
     * (and is interrupted).
     */
    boolean autoRenew() default true;

    /**
     * The minimum hold, ShedLock's {@code lockAtLeastFor}: the lock stays held until this long after it
     * was acquired even when the method returns sooner, so that other nodes do not run the same
     * scheduled slot again. Done by shortening the lease to the time left (one renewal, no waiting
     * thread); empty: released when the method returns.
     */
    String minHold() default "";

    /** The lock type stored with the grant, to list locks by (empty: none). */
    String type() default "";

    /** The owner description stored with the grant (empty: the client's, {@code fencelock.owner}). */
    String owner() default "";
}
