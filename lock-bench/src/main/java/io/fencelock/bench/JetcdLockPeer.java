package io.fencelock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * jetcd's client of etcd's Lock service (v3lock): a lock call that blocks on the server until the
 * lock is granted. Ownership is the etcd lease, and etcd treats calls to Lock with the same lease as
 * one acquisition (its API: "locking twice with the same lease is a no-op"), so two threads sharing a
 * lease would both hold the lock at once. Each thread therefore locks with its own lease (as each
 * goroutine of etcd's own concurrency package uses its own session), granted on its first acquire and
 * kept alive by jetcd's keepAlive.
 */
final class JetcdLockPeer implements LockContender {
    private static final long LEASE_SECONDS = 30;

    private final Client client;
    private final ThreadLocal<ThreadLease> leaseOfThread = new ThreadLocal<>();
    private final Queue<ThreadLease> leases = new ConcurrentLinkedQueue<>();

    private record ThreadLease(long id, CloseableClient keepAlive) {}

    private JetcdLockPeer(Client client) {
        this.client = client;
    }

    static Factory factory(Supplier<Client> clients) {
        return new Factory(
                "jetcd Lock", Kind.PEER, "server-side wait (Lock service)", () -> new JetcdLockPeer(clients.get()));
    }

    private ThreadLease lease() throws Exception {
        ThreadLease lease = leaseOfThread.get();
        if (lease == null) {
            long id = client.getLeaseClient()
                    .grant(LEASE_SECONDS)
                    .get(10, TimeUnit.SECONDS)
                    .getID();
            lease = new ThreadLease(id, client.getLeaseClient().keepAlive(id, new StreamObserver<>() {
                @Override
                public void onNext(LeaseKeepAliveResponse value) {}

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            }));
            leases.add(lease);
            leaseOfThread.set(lease);
        }
        return lease;
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        ThreadLease lease = lease();
        CompletableFuture<LockResponse> call =
                client.getLockClient().lock(EtcdUnderTest.bytes("bench-jetcd-lock/" + name), lease.id());
        LockResponse granted;
        try {
            granted = call.get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // Cancelling the future does not end the wait on the server, which would grant the lock later
            // to a lease nobody releases: give the lease up (the server's wait ends) and use a new one.
            call.cancel(true);
            leaseOfThread.remove();
            leases.remove(lease);
            lease.keepAlive().close();
            client.getLeaseClient().revoke(lease.id()).get(10, TimeUnit.SECONDS);
            return null;
        }
        ByteSequence key = granted.getKey();
        return () -> client.getLockClient().unlock(key).get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        leases.forEach(lease -> lease.keepAlive().close());
        client.close();
    }
}
