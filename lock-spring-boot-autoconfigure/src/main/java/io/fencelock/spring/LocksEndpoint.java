package io.fencelock.spring;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code locks} Actuator endpoint: {@code /actuator/locks} lists the leases this application
 * holds (token, expiry, metadata) and its recent losses; {@code /actuator/locks/{prefix}} the locks
 * held on the whole backend whose names start with the prefix (slashes included).
 */
@Endpoint(id = "locks")
public class LocksEndpoint {
    private final LockClient client;
    private final LeaseLossHistory history;
    private final FencelockProperties properties;

    public LocksEndpoint(LockClient client, LeaseLossHistory history, FencelockProperties properties) {
        this.client = client;
        this.history = history;
        this.properties = properties;
    }

    /** This application's leases. */
    @ReadOperation
    public Held held() {
        return new Held(
                client.clientId(),
                client.backendName(),
                client.held().stream().map(HeldLease::of).toList(),
                history.within(properties.getHealth().getLostLeaseWindow()));
    }

    /** The backend's held locks whose names start with {@code prefix}. */
    @ReadOperation
    public Listed locks(@Selector(match = Selector.Match.ALL_REMAINING) String[] prefix) {
        String joined = String.join("/", prefix);
        return new Listed(
                joined, client.list(joined).stream().map(BackendLock::of).toList());
    }

    /**
     * This application's leases.
     *
     * @param client      the client's id
     * @param backend     the provider's name
     * @param leases      the leases held now
     * @param recentLosses the leases lost within {@code fencelock.health.lost-lease-window}, newest first
     */
    public record Held(
            String client, String backend, List<HeldLease> leases, List<LeaseLossHistory.Loss> recentLosses) {}

    /**
     * One lease of this application.
     *
     * @param name              the lock name
     * @param leaseId           the lease's id
     * @param token             its fencing token
     * @param state             HELD, LOST or RELEASED
     * @param ttl               its TTL (ISO-8601)
     * @param serverExpiry      the backend's expiry of the latest grant
     * @param remainingValidity the time left until the local validity deadline (ISO-8601)
     * @param owner             the owner description
     * @param type              the lock type, or null
     * @param data              the user data
     */
    public record HeldLease(
            String name,
            String leaseId,
            long token,
            String state,
            String ttl,
            String serverExpiry,
            String remainingValidity,
            String owner,
            String type,
            Map<String, String> data) {
        static HeldLease of(Lease lease) {
            LockMetadata m = lease.metadata();
            return new HeldLease(
                    lease.name(),
                    lease.leaseId(),
                    lease.fencingToken(),
                    lease.state().name(),
                    lease.ttl().toString(),
                    text(lease.serverExpiry()),
                    lease.remainingValidity().toString(),
                    m.owner(),
                    m.type(),
                    m.data());
        }
    }

    /**
     * The backend's locks under a prefix.
     *
     * @param prefix the prefix asked for
     * @param locks  the held locks, by name
     */
    public record Listed(String prefix, List<BackendLock> locks) {}

    /**
     * One lock as the backend records it.
     *
     * @param name      the lock name
     * @param leaseId   the holding lease's id
     * @param token     the last fencing token issued
     * @param expiresAt the holder's expiry on the backend's clock
     * @param heldSince when the grant was made, where the backend keeps it
     * @param owner     the holder's owner description, where the backend keeps metadata
     * @param type      the holder's lock type
     * @param data      the holder's user data
     */
    public record BackendLock(
            String name,
            String leaseId,
            long token,
            String expiresAt,
            String heldSince,
            String owner,
            String type,
            Map<String, String> data) {
        static BackendLock of(LockInfo info) {
            return new BackendLock(
                    info.name(),
                    info.holder().orElse(null),
                    info.token(),
                    text(info.expiresAt()),
                    text(info.heldSince()),
                    info.owner().orElse(null),
                    info.type().orElse(null),
                    info.data());
        }
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }
}
