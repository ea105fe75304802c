package io.fencelock.coordination;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import io.fencelock.LockNames;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Who holds a lock, told through the locks themselves so that it works on every backend: next to
 * lock {@code name} held by lease {@code L}, its holder also holds {@code name#owner/L/<owner id>}.
 * A reader takes the lease id from the lock's record and finds the marker that names that very
 * lease, so a marker left by an earlier holder (not yet expired) never answers for a later one.
 */
final class OwnerRecords {
    static final String MARKER = "#owner/";
    /** The lease id the engine generates: a random UUID. */
    private static final int LEASE_ID_LENGTH = 36;

    static final int MAX_OWNER_ID = 64;
    private static final Pattern OWNER_ID = Pattern.compile("[A-Za-z0-9._\\-:@+=]+");

    private OwnerRecords() {}

    /** The longest lock name that can still carry an owner marker. */
    static int maxNameLength(int ownerIdLength) {
        return LockNames.MAX_LENGTH - MARKER.length() - LEASE_ID_LENGTH - 1 - ownerIdLength;
    }

    /** Validates an owner (candidate, instance) id: the characters of a lock name without {@code / #}, at most 64. */
    static String requireOwnerId(String what, String id) {
        if (id == null
                || id.isEmpty()
                || id.length() > MAX_OWNER_ID
                || !OWNER_ID.matcher(id).matches()) {
            throw new IllegalArgumentException(what + " '" + id + "' is invalid: 1 to " + MAX_OWNER_ID
                    + " characters from A-Z a-z 0-9 . _ - : @ + =");
        }
        return id;
    }

    /** Validates a lock name that will carry an owner marker for {@code ownerId}. */
    static String requireMarkableName(String what, String name, String ownerId) {
        LockNames.requireValid(name);
        if (name.contains("#")) {
            throw new IllegalArgumentException(
                    what + " '" + name + "' must not contain '#': it separates a lock from its owner record");
        }
        int max = maxNameLength(ownerId.length());
        if (name.length() > max) {
            throw new IllegalArgumentException(what + " '" + name + "' is " + name.length()
                    + " characters; with owner id '" + ownerId + "' at most " + max + " fit in a lock name of "
                    + LockNames.MAX_LENGTH + " with its owner record");
        }
        return name;
    }

    /** Publishes the owner of {@code lease}; empty when the marker could not be taken (then nobody can tell). */
    static Optional<Lease> publish(LockClient client, Lease lease, String ownerId) {
        try {
            return client.tryAcquire(markerOf(lease.name(), lease.leaseId(), ownerId), lease.ttl());
        } catch (RuntimeException e) {
            return Optional.empty(); // the owner record is for display; the lock itself is held regardless
        }
    }

    /** The owner of the current holder of {@code name}, with the holder's record. */
    static Optional<Holder> holderOf(LockClient client, String name) {
        Optional<LockInfo> info = client.inspect(name).filter(LockInfo::held);
        if (info.isEmpty()) {
            return Optional.empty();
        }
        String leaseId = info.get().leaseId();
        String prefix = name + MARKER + leaseId + "/";
        String owner = null;
        if (leaseId != null && leaseId.length() == LEASE_ID_LENGTH) {
            owner = client.list(prefix).stream()
                    .map(LockInfo::name)
                    .filter(n -> n.startsWith(prefix))
                    .map(n -> n.substring(prefix.length()))
                    .findFirst()
                    .orElse(null);
        }
        return Optional.of(new Holder(name, Optional.ofNullable(owner), info.get()));
    }

    /** Every held lock under {@code prefix} (markers left out) with its owner where one is published. */
    static List<Holder> holdersUnder(LockClient client, String prefix) {
        List<LockInfo> all = client.list(prefix);
        java.util.Map<String, String> ownerByMarkerPrefix = new java.util.HashMap<>();
        for (LockInfo i : all) {
            int at = i.name().indexOf(MARKER);
            if (at > 0) {
                int slash = i.name().lastIndexOf('/');
                ownerByMarkerPrefix.put(
                        i.name().substring(0, slash + 1), i.name().substring(slash + 1));
            }
        }
        return all.stream()
                .filter(i -> !i.name().contains(MARKER) && i.held())
                .map(i -> new Holder(
                        i.name(),
                        Optional.ofNullable(ownerByMarkerPrefix.get(i.name() + MARKER + i.leaseId() + "/")),
                        i))
                .toList();
    }

    private static String markerOf(String name, String leaseId, String ownerId) {
        return name + MARKER + leaseId + "/" + ownerId;
    }

    /** A held lock and, where published, the id of its owner. */
    record Holder(String name, Optional<String> ownerId, LockInfo record) {}

    /** A short default id for this process: host name and process id. */
    static String defaultOwnerId() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | RuntimeException e) {
            host = "host";
        }
        String id = host.replaceAll("[^A-Za-z0-9._\\-]", "_") + ":"
                + ProcessHandle.current().pid();
        return id.length() <= MAX_OWNER_ID ? id : id.substring(id.length() - MAX_OWNER_ID);
    }

    static Duration positive(String what, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " " + d + " must be positive");
        }
        return d;
    }
}
