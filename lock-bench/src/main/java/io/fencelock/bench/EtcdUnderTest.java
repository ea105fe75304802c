package io.fencelock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.fencelock.etcd.EtcdLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.testservers.etcd.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** etcd from lock-tck's fixture (env endpoints, local etcd binary, Testcontainers). */
final class EtcdUnderTest extends BackendUnderTest {
    private static final long RAW_LEASE_SECONDS = 3600; // outlives the run: the raw primitive never renews
    private static final int OPS_PER_TXN = 128; // etcd's default --max-txn-ops
    private static final int TXNS_IN_FLIGHT = 16;

    private final EtcdServer server;

    EtcdUnderTest() {
        this(EtcdServer.shared());
    }

    private EtcdUnderTest(EtcdServer server) {
        super("etcd", "io.fencelock.etcd", "watch on the key", server);
        this.server = server;
    }

    @Override
    public LockBackend openBackend() {
        return EtcdLockBackend.builder().endpoints(server.endpoints()).build();
    }

    Client openClient() {
        return Client.builder()
                .endpoints(server.endpoints().toArray(String[]::new))
                .build();
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Override
    protected RawPrimitive openRaw() throws Exception {
        Client client = openClient();
        KV kv = client.getKVClient();
        long lease = client.getLeaseClient()
                .grant(RAW_LEASE_SECONDS)
                .get(10, TimeUnit.SECONDS)
                .getID();
        return new RawPrimitive() {
            @Override
            public boolean tryAcquire(String name, String owner, Duration ttl) throws Exception {
                ByteSequence key = bytes("bench-raw/" + name);
                TxnResponse r = kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(
                                key,
                                bytes(owner),
                                PutOption.builder().withLeaseId(lease).build()))
                        .commit()
                        .get(10, TimeUnit.SECONDS);
                return r.isSucceeded();
            }

            @Override
            public void release(String name, String owner) throws Exception {
                ByteSequence key = bytes("bench-raw/" + name);
                kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(bytes(owner))))
                        .Then(Op.delete(key, io.etcd.jetcd.options.DeleteOption.DEFAULT))
                        .commit()
                        .get(10, TimeUnit.SECONDS);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    @Override
    public String rawPrimitiveDescription() {
        return "one txn (createRevision == 0 ? put with lease) + one txn (value == owner ? delete), jetcd";
    }

    @Override
    protected List<LockContender.Factory> peers() {
        return List.of(JetcdLockPeer.factory(this::openClient));
    }

    @Override
    public List<String> peersNotMeasured() {
        return List.of("ShedLock (etcd): shedlock-provider-etcd-jetcd is not on Maven Central as reachable here");
    }

    /**
     * etcd keeps no record of a free lock (the key is deleted on release; its token is the next
     * key's create revision), so the names filled in are held locks, bound to one long lease.
     */
    @Override
    public void fill(long from, long to) throws Exception {
        try (Client client = openClient()) {
            long lease = client.getLeaseClient()
                    .grant(RAW_LEASE_SECONDS)
                    .get(10, TimeUnit.SECONDS)
                    .getID();
            PutOption withLease = PutOption.builder().withLeaseId(lease).build();
            ByteSequence value = bytes("bench-fill");
            List<CompletableFuture<TxnResponse>> inFlight = new ArrayList<>();
            for (long start = from; start < to; start += OPS_PER_TXN) {
                List<Op> puts = new ArrayList<>();
                for (long i = start; i < Math.min(to, start + OPS_PER_TXN); i++) {
                    puts.add(Op.put(bytes("fencelock/" + FILL_PREFIX + i), value, withLease));
                }
                inFlight.add(
                        client.getKVClient().txn().Then(puts.toArray(Op[]::new)).commit());
                if (inFlight.size() == TXNS_IN_FLIGHT) {
                    for (CompletableFuture<TxnResponse> f : inFlight) {
                        f.get(30, TimeUnit.SECONDS);
                    }
                    inFlight.clear();
                }
            }
            for (CompletableFuture<TxnResponse> f : inFlight) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    @Override
    public void close() {}
}
