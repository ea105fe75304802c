package io.fencelock.examples;

import io.fencelock.LockClient;
import io.fencelock.spi.LockBackendProvider;

/** Run by {@link ModulePathTest} in a child JVM whose fencelock jars are on the module path. */
public final class ModulePathProbe {
    private ModulePathProbe() {}

    public static void main(String[] args) {
        for (LockBackendProvider provider : LockClient.providers()) {
            System.out.println(
                    provider.name() + " in " + provider.getClass().getModule().getName());
        }
    }
}
