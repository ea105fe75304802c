package io.fencelock.etcd;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.etcd.EtcdServer;
import org.junit.jupiter.api.AfterAll;

/** The whole TCK against a 3-node etcd cluster on loopback, each client talking to all three members. */
class EtcdClusterContractTest extends LockBackendContract {
    private EtcdServer cluster;

    @Override
    protected BackendFixture fixture() {
        cluster = EtcdServer.startCluster(3);
        return EtcdContractTest.fixtureOn(cluster);
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }
}
