package io.fencelock.bench;

import io.fencelock.spi.LockBackend;
import io.fencelock.testservers.zookeeper.ZooKeeperServer;
import io.fencelock.zookeeper.ZooKeeperLockBackendProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

/** ZooKeeper from lock-tck's fixture (FENCELOCK_ZOOKEEPER_URL, or a server from the Maven artifact in a child JVM). */
final class ZooKeeperUnderTest extends BackendUnderTest {
    private static final int RAW_SESSION_MILLIS = 30_000;
    private static final int FILL_PER_MULTI = 500;
    private static final String RAW_BASE = "/bench-raw";

    private final ZooKeeperServer server;
    private volatile ZooKeeper filler; // holds the filled names (ephemeral znodes) until the run ends

    ZooKeeperUnderTest() {
        this(ZooKeeperServer.shared());
    }

    private ZooKeeperUnderTest(ZooKeeperServer server) {
        super("zookeeper", "io.fencelock.zookeeper", "persistent watch on the znode", server);
        this.server = server;
    }

    @Override
    public LockBackend openBackend() {
        return new ZooKeeperLockBackendProvider().open(server.url(), Map.of());
    }

    /** A plain client of the official library, connected. */
    ZooKeeper openClient(int sessionMillis) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        ZooKeeper zk = new ZooKeeper(
                server.connectString(),
                sessionMillis,
                e -> {
                    if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                config);
        if (!connected.await(10, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("no ZooKeeper server answered at " + server.connectString());
        }
        return zk;
    }

    String connectString() {
        return server.connectString();
    }

    private static void ensurePath(ZooKeeper zk, String path) throws Exception {
        try {
            zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // there already
        }
    }

    @Override
    protected RawPrimitive openRaw() throws Exception {
        ZooKeeper zk = openClient(RAW_SESSION_MILLIS);
        ensurePath(zk, RAW_BASE);
        return new RawPrimitive() {
            @Override
            public boolean tryAcquire(String name, String owner, Duration ttl) throws Exception {
                try {
                    zk.create(
                            RAW_BASE + "/" + name,
                            owner.getBytes(StandardCharsets.UTF_8),
                            ZooDefs.Ids.OPEN_ACL_UNSAFE,
                            CreateMode.EPHEMERAL);
                    return true;
                } catch (KeeperException.NodeExistsException e) {
                    return false;
                }
            }

            @Override
            public void release(String name, String owner) throws Exception {
                try {
                    zk.delete(RAW_BASE + "/" + name, -1);
                } catch (KeeperException.NoNodeException e) {
                    // gone already
                }
            }

            @Override
            public void close() throws Exception {
                zk.close();
            }
        };
    }

    @Override
    public String rawPrimitiveDescription() {
        return "create(ephemeral znode) + delete(znode), official client, one session";
    }

    @Override
    protected List<LockContender.Factory> peers() {
        return List.of(CuratorMutexPeer.factory(this::connectString));
    }

    /**
     * ZooKeeper keeps no record of a free lock (the ephemeral znode is deleted on release; its token is
     * the next znode's creation zxid), so the names filled in are held locks as the provider writes them:
     * an ephemeral znode and its lease marker each, of one session kept open until the run ends, created
     * in multis of {@value #FILL_PER_MULTI} names.
     */
    @Override
    public void fill(long from, long to) throws Exception {
        ZooKeeper zk = filler;
        if (zk == null) {
            zk = openClient(RAW_SESSION_MILLIS);
            ensurePath(zk, "/fencelock");
            ensurePath(zk, "/fencelock/%leases");
            filler = zk;
        }
        byte[] value = "bench-fill\n30000".getBytes(StandardCharsets.UTF_8);
        for (long start = from; start < to; start += FILL_PER_MULTI) {
            List<Op> creates = new ArrayList<>();
            for (long i = start; i < Math.min(to, start + FILL_PER_MULTI); i++) {
                creates.add(Op.create(
                        "/fencelock/" + FILL_PREFIX + i, value, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL));
                creates.add(Op.create(
                        "/fencelock/%leases/" + FILL_PREFIX + i + "%:bench-fill",
                        new byte[0],
                        ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.EPHEMERAL));
            }
            zk.multi(creates);
        }
    }

    /** Every held name is two znodes (the lock and its lease marker) in the server's memory; the fixture's server is a child JVM of at most 320 MB. */
    @Override
    public long maxScaleNames() {
        return 100_000;
    }

    @Override
    public String limitReason() {
        return "every held name is two znodes (the lock and its lease marker) in the server's heap, and the fixture's ZooKeeper runs in a child JVM of at most 320 MB";
    }

    @Override
    public void close() {
        ZooKeeper zk = filler;
        if (zk != null) {
            try {
                zk.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
