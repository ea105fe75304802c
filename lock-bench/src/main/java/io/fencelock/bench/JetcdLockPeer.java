package io.fencelock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * jetcd's client of etcd's Lock service (v3lock): one etcd lease per client, kept alive, and a
 * lock call that blocks on the server until the lock is granted.
 */
final class JetcdLockPeer implements LockContender {
    private static final long LEASE_SECONDS = 30;

    private final Client client;
    private final long lease;
    private final CloseableClient keepAlive;

    private JetcdLockPeer(Client client) throws Exception {
        this.client = client;
        this.lease = client.getLeaseClient()
                .grant(LEASE_SECONDS)
                .get(10, TimeUnit.SECONDS)
                .getID();
        this.keepAlive = client.getLeaseClient().keepAlive(lease, new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveResponse value) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        });
    }

    static Factory factory(Supplier<Client> clients) {
        return new Factory(
                "jetcd Lock", Kind.PEER, "server-side wait (Lock service)", () -> new JetcdLockPeer(clients.get()));
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        CompletableFuture<LockResponse> call =
                client.getLockClient().lock(EtcdUnderTest.bytes("bench-jetcd-lock/" + name), lease);
        LockResponse granted;
        try {
            granted = call.get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            return null;
        }
        ByteSequence key = granted.getKey();
        return () -> client.getLockClient().unlock(key).get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        keepAlive.close();
        client.close();
    }
}
