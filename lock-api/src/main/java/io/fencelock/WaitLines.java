package io.fencelock;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * One client's local queues of waiting acquires, one per lock name, first come first served.
 *
 * <p>Only the waiter at the head of a name's line talks to the backend: it subscribes to the
 * release signal, makes the attempts and sleeps between them. The others sleep until they reach
 * the head or their wait runs out, so however many threads wait for one name, the client has at
 * most one attempt in flight for it and holds at most one pooled connection for it. A release by a
 * holder in the same client wakes the head at once; the head still needs its own grant and token
 * from the backend. Where the backend hands a grant over in one step, the head offers to take its own
 * client's grant over ({@link HandOver}) and the releasing holder asks the backend for the head.
 */
final class WaitLines {
    private final ConcurrentHashMap<String, ArrayDeque<Waiter>> lines = new ConcurrentHashMap<>();

    /** A waiting acquire: woken when it reaches the head of its line, and, as head, on a release. */
    static final class Waiter {
        private final String name;
        private final Semaphore signal = new Semaphore(0);
        /** What this waiter asks for, where a holder of its client can hand the name over to it; else null. */
        private final Engine.AcquireSpec handOverSpec;

        private volatile boolean head;
        /** The offer standing for this waiter, open or claimed by a releasing holder; null when none. */
        private final AtomicReference<HandOver> handOver = new AtomicReference<>();
        /** The head's attempt in flight, whose refusal may queue it for a grant by a release; null when none. */
        private volatile Sent attempting;
        /** The head's lease in the backend's queue for a grant by a release ({@code GRANT_ON_RELEASE}); null when none. */
        private volatile Sent queued;
        /**
         * A plain attempt of this head's client on the name, in flight: the backend takes it for the waiter's, so
         * its refusal may queue the client under its lease, and a release may grant that lease before the answer
         * (and {@link #adoptQueued}) arrives; null when none.
         */
        private volatile Sent plainAttempt;
        /** That plain attempt, once a release's grant to its lease was offered to this head; null before. */
        private volatile Sent plainGranted;
        /** A grant a release made to one of the two, not yet taken by the head. */
        private final AtomicReference<Grant> granted = new AtomicReference<>();

        private Waiter(String name, Engine.AcquireSpec handOverSpec) {
            this.name = name;
            this.handOverSpec = handOverSpec;
        }

        boolean isHead() {
            return head;
        }

        /** Wakes this waiter (it is at the head, or a release happened while it is). */
        void signal() {
            signal.release();
        }

        /** Forgets signals that came before an attempt: the attempt sees their effect. */
        void forgetSignals() {
            signal.drainPermits();
        }

        /**
         * Sleeps up to {@code nanos} or until signalled.
         *
         * @return whether it was signalled
         */
        boolean await(long nanos) throws InterruptedException {
            return nanos > 0 && signal.tryAcquire(nanos, TimeUnit.NANOSECONDS);
        }

        /**
         * Offers to take over the grant its client holds of the name; see {@link HandOver}. An offer already
         * standing stays: withdrawing it to offer again would leave a moment in which a release finds none.
         * Nothing where no holder can hand over to this waiter.
         */
        void offerHandOver() {
            if (handOverSpec != null && handOver.get() == null) {
                handOver.compareAndSet(null, new HandOver(handOverSpec, this));
            }
        }

        /**
         * The grant a releasing holder handed over to this waiter, once one claimed its offer (waiting for
         * that holder's answer), or null; an open offer stays open. Called whenever the waiter wakes.
         */
        ManagedLease takeHandedOver() {
            HandOver offer = handOver.get();
            return offer == null || offer.isOpen() ? null : offer.settle();
        }

        /**
         * Settles the offer this waiter may have standing: the grant a holder handed over to it, or null
         * after withdrawing an open offer. Called before it asks the backend itself and when it leaves.
         */
        ManagedLease settleHandOver() {
            HandOver offer = handOver.get();
            return offer == null ? null : offer.settle();
        }

        /** The head sends an attempt under {@code leaseId} now: a release may grant it before the answer arrives. */
        void attempting(String leaseId, long sentNanos) {
            attempting = new Sent(leaseId, sentNanos);
        }

        /** The attempt under {@code leaseId} failed: its lease is swept, so a grant to it is never this head's. */
        void attemptFailed(String leaseId) {
            Sent sent = attempting;
            if (sent != null && sent.leaseId.equals(leaseId)) {
                attempting = null;
            }
        }

        /**
         * The backend answered that this head's client waits in its queue under {@code leaseId}: when that is
         * the attempt just answered, the queued lease is now that one (its send time is the grant's earliest).
         */
        void queuedAs(String leaseId) {
            Sent sent = attempting;
            if (sent != null && sent.leaseId.equals(leaseId)) {
                queued = sent;
            }
        }

        /**
         * Another attempt of this head's client queued the client under {@code sent} (a plain {@code tryAcquire}
         * on the name): the head is queued under it from now, unless its own queued lease was sent later.
         */
        void adoptQueued(Sent sent) {
            Sent q = queued;
            if (q == null || sent.sentNanos - q.sentNanos > 0) {
                queued = sent;
            }
        }

        /** The head's queued lease (its id and send time) if it is {@code leaseId}, else null. */
        Sent queuedUnder(String leaseId) {
            Sent q = queued;
            if (q != null && q.leaseId.equals(leaseId)) {
                return q;
            }
            Sent a = attempting;
            if (a != null && a.leaseId.equals(leaseId)) {
                return a;
            }
            Sent p = plainAttempt;
            return p != null && p.leaseId.equals(leaseId) ? p : null;
        }

        /** The head's queued lease, if any: one a release may still grant after the head stops waiting. */
        Sent queued() {
            return queued;
        }

        /** The grant a release made to this head's queued lease, taken once; null when none came. */
        Grant takeGrant() {
            return granted.getAndSet(null);
        }
    }

    /** A lease id and when the attempt that carried it was sent (the engine's clock). */
    record Sent(String leaseId, long sentNanos) {}

    /** A grant a release made to a queued lease: its id, token and the backend's expiry (for display). */
    record Grant(String leaseId, long token, java.time.Instant expiresAt) {}

    /**
     * The head's standing offer, while its own client holds the name, to have that grant handed over to it:
     * open until a releasing holder claims it (then that holder asks the backend and hands the answer
     * over) or the head withdraws it (then no holder will). Exactly one of the two wins, so a grant the
     * backend hands over always reaches a waiter that still takes it.
     */
    static final class HandOver {
        private static final int OPEN = 0;
        private static final int CLAIMED = 1;
        private static final int WITHDRAWN = 2;

        final Engine.AcquireSpec spec;
        private final Waiter waiter;
        private final AtomicInteger state = new AtomicInteger(OPEN);
        private final CountDownLatch answered = new CountDownLatch(1);
        private volatile ManagedLease lease;

        private HandOver(Engine.AcquireSpec spec, Waiter waiter) {
            this.spec = spec;
            this.waiter = waiter;
        }

        private boolean isOpen() {
            return state.get() == OPEN;
        }

        /** The releasing holder's side: whether it now owes the head an answer. */
        private boolean claim() {
            return state.compareAndSet(OPEN, CLAIMED);
        }

        /** The claiming holder's answer: the head's new grant, or {@code null} when nothing was handed over. */
        void answer(ManagedLease granted) {
            lease = granted;
            answered.countDown();
            waiter.signal();
        }

        /**
         * The head's side, before it attempts, leaves or gives up: withdraws the offer, or, when a holder
         * already claimed it, waits for that holder's answer (one round trip, never interrupted: the grant
         * must not be lost) and returns the grant it brought, if any.
         */
        ManagedLease settle() {
            waiter.handOver.compareAndSet(this, null);
            if (state.compareAndSet(OPEN, WITHDRAWN)) {
                return null;
            }
            boolean interrupted = false;
            while (true) {
                try {
                    answered.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return lease;
        }
    }

    /**
     * Puts a new waiter at the end of {@code name}'s line (at its head when the line was empty);
     * {@code handOverSpec} is what it asks for where a holder of this client may hand the name over to it
     * (null: no hand-over).
     */
    Waiter join(String name, Engine.AcquireSpec handOverSpec) {
        Waiter waiter = new Waiter(name, handOverSpec);
        lines.compute(name, (n, line) -> {
            ArrayDeque<Waiter> l = line == null ? new ArrayDeque<>() : line;
            l.addLast(waiter);
            if (l.size() == 1) {
                waiter.head = true;
            }
            return l;
        });
        return waiter;
    }

    /** Takes {@code waiter} out of its line; when it was the head, the next in line becomes head and is woken. */
    void leave(Waiter waiter) {
        lines.computeIfPresent(waiter.name, (n, line) -> {
            boolean wasHead = line.peekFirst() == waiter;
            line.remove(waiter);
            Waiter next = line.peekFirst();
            if (wasHead && next != null) {
                next.head = true;
                // The leaving head often holds the name now and releases it before the next head is awake:
                // an offer standing from the promotion on lets that release hand the name over to it.
                next.offerHandOver();
                next.signal();
            }
            return line.isEmpty() ? null : line;
        });
    }

    /** Wakes the head of {@code name}'s line, if anyone waits: a holder of this client released it. */
    void released(String name) {
        // containsKey, not isEmpty(): under concurrent updates isEmpty() is an estimate that can read empty
        // while this name's head waits, and the head would miss the release it waits for
        if (!lines.containsKey(name)) {
            return; // the usual case: nobody of this client waits for the name
        }
        lines.computeIfPresent(name, (n, line) -> {
            Waiter head = line.peekFirst();
            if (head != null) {
                head.signal();
            }
            return line;
        });
    }

    /**
     * Gives {@code grant}, a release's grant to a lease of this client's queue, to the head of {@code name}'s
     * line when that head waits under the lease, and wakes it; false when no waiter here takes it (the
     * caller lets it go).
     */
    boolean offerGrant(String name, Grant grant) {
        return atHead(name, head -> {
            Sent under = head.queuedUnder(grant.leaseId());
            if (under == null) {
                return false;
            }
            if (under == head.plainAttempt) {
                head.plainGranted = under; // the attempt's answer, when it comes, leaves the lease to this head
            }
            head.granted.set(grant);
            head.signal();
            return true;
        });
    }

    /** Whether any acquire of this client waits for {@code name}: one map lookup, no lock. */
    boolean anyWaiting(String name) {
        return lines.containsKey(name);
    }

    /**
     * A plain attempt of this client on {@code name} is sent now, under {@code sent}: the head of the name's line,
     * if one waits, takes a release's grant to it as its own until the answer is in ({@link #plainAnswered}).
     * Nothing, and no lock taken, when nobody of this client waits for the name (the usual case). Returns whether
     * a head took it.
     */
    boolean plainAttempting(String name, Sent sent) {
        return atHead(name, head -> {
            head.plainAttempt = sent;
            return true;
        });
    }

    /**
     * The plain attempt under {@code sent} was answered (or failed). When the answer is that the backend queued the
     * client under its lease ({@code queuedHere}), the head of the name's line takes that place ({@link
     * Waiter#adoptQueued}), unless the lease is held here already ({@code heldHere}: a head took a release's grant
     * to it and left the line after it was held). Returns whether the lease is this client's business now: a head
     * was offered a release's grant to it while it was in flight (the head holds or lets go of it), or a head
     * took its place. False when no head of this client waits: the caller withdraws a place or sweeps the lease.
     */
    boolean plainAnswered(String name, Sent sent, boolean queuedHere, Predicate<String> heldHere) {
        return atHead(name, head -> {
            if (head.plainGranted == sent) {
                return true; // the registration stays, so that the head still finds the grant its own
            }
            if (head.plainAttempt == sent) {
                if (queuedHere) {
                    head.adoptQueued(sent); // before the registration goes: a grant to it always finds its head
                }
                head.plainAttempt = null;
                return queuedHere;
            }
            if (queuedHere && !heldHere.test(sent.leaseId)) {
                head.adoptQueued(sent); // a head that came to the line after the attempt was sent
                return true;
            }
            return queuedHere;
        });
    }

    /** Runs {@code take} on the head of {@code name}'s line under the line's lock, if one waits; false when none does. */
    private boolean atHead(String name, Predicate<Waiter> take) {
        if (!lines.containsKey(name)) {
            return false;
        }
        boolean[] taken = new boolean[1];
        lines.computeIfPresent(name, (n, line) -> {
            Waiter head = line.peekFirst();
            taken[0] = head != null && head.head && take.test(head);
            return line;
        });
        return taken[0];
    }

    /** Claims the open hand-over offer of {@code name}'s head, if it has one: the caller then owes it an answer. */
    HandOver claimHandOver(String name) {
        if (!lines.containsKey(name)) {
            return null;
        }
        HandOver[] claimed = new HandOver[1];
        lines.computeIfPresent(name, (n, line) -> {
            Waiter head = line.peekFirst();
            HandOver offer = head == null ? null : head.handOver.get();
            if (offer != null && offer.claim()) {
                claimed[0] = offer;
            }
            return line;
        });
        return claimed[0];
    }

    /** How many acquires of this client wait for {@code name} (the head included). */
    int waiting(String name) {
        int[] size = new int[1];
        lines.computeIfPresent(name, (n, line) -> {
            size[0] = line.size();
            return line;
        });
        return size[0];
    }
}
