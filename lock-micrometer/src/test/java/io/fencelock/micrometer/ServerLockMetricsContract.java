package io.fencelock.micrometer;

import io.fencelock.LockClient;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.fault.FaultProxy;
import io.fencelock.testservers.common.ServerFixture;

/**
 * The meters on a real server: clients opened by the fixture's connection, and the failing backend
 * one through the fault proxy, which refuses every connection once broken (what a stopped server
 * looks like to a client), with the proxy's short timeouts.
 */
abstract class ServerLockMetricsContract extends LockMetricsContract {

    protected abstract ServerFixture fixture();

    @Override
    protected ClientConnection connection() {
        return fixture().clientConnection().orElseThrow();
    }

    @Override
    protected Breakable breakable() {
        FaultProxy proxy = FaultProxy.start(fixture().proxyTarget().orElseThrow());
        try {
            LockClient client = LockClient.builder()
                    .backend(fixture().openBackendVia(proxy.address()))
                    .options(options())
                    .build();
            return new Breakable(client, proxy::refuse, () -> {
                proxy.heal(); // so that closing releases at once
                client.close();
                proxy.close();
            });
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }
}
