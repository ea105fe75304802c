package io.fencelock.zookeeper;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.zookeeper.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole TCK against a 3-member ZooKeeper ensemble on loopback (each member in a child JVM), each
 * client given all three; the restart faults kill a follower and then the leader while clients work.
 */
class ZooKeeperEnsembleContractTest extends LockBackendContract {
    private ZooKeeperServer ensemble;

    @Override
    protected BackendFixture fixture() {
        ensemble = ZooKeeperServer.startEnsemble(3);
        return ZooKeeperContractTest.fixtureOn(ensemble);
    }

    @AfterAll
    void stopEnsemble() {
        if (ensemble != null) {
            ensemble.close();
        }
    }
}
