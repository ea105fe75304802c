package io.fencelock.zookeeper;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.zookeeper.ZooKeeperServer;
import java.util.Map;

/** The whole TCK against a single ZooKeeper server (see ZooKeeperServer for where it comes from). */
class ZooKeeperContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(ZooKeeperServer.shared());
    }

    /**
     * For a single node or an ensemble: the ensemble's control acts on every member at once, and its
     * {@code replicaSet()} on each. The fault proxy stands before a single node, or an ensemble's first
     * member: the proxied backend is given only that address, so every session, the watches' included,
     * goes through it.
     */
    static BackendFixture fixtureOn(ZooKeeperServer server) {
        return ServerFixture.on(server, () -> new ZooKeeperLockBackendProvider().open(server.url(), Map.of()))
                .withProxy(via -> new ZooKeeperLockBackendProvider()
                        .open(server.urlVia(via), Map.of("requestTimeout", PROXIED_TIMEOUT.toString())))
                .withClient(new ClientConnection(server.url(), Map.of())); // default base path
    }
}
