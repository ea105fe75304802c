package io.fencelock.testservers.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class ServerLocatorTest {

    @Test
    void takesTheFirstSourceThatIsThereAndSaysWhy() {
        ServerLocator.Located<String> located = ServerLocator.<String>forBackend("demo", "install demo")
                .candidate("env", () -> {
                    throw new ServerLocator.Unavailable("DEMO_URL is not set");
                })
                .candidate("binaries", () -> "server-from-binaries")
                .candidate("embedded", () -> {
                    throw new AssertionError("must not be tried after a source was found");
                })
                .locate();

        assertThat(located.server()).isEqualTo("server-from-binaries");
        assertThat(located.source()).isEqualTo("binaries");
        assertThat(located.description()).contains("binaries").contains("DEMO_URL is not set");
    }

    @Test
    void noSourceSkipsOutsideCiAndFailsInCi() {
        ServerLocator<String> locator = ServerLocator.<String>forBackend("demo", "apt-get install demo")
                .candidate("env", () -> {
                    throw new ServerLocator.Unavailable("DEMO_URL is not set");
                });

        Class<? extends Throwable> expected =
                ServerLocator.runningInCi() ? AssertionFailedError.class : TestAbortedException.class;
        assertThatThrownBy(locator::locate)
                .isInstanceOf(expected)
                .hasMessageContaining("apt-get install demo")
                .hasMessageContaining("DEMO_URL is not set");
    }

    @Test
    void aSourceThatIsThereButBrokenIsAnErrorNotAFallback() {
        ServerLocator<String> locator = ServerLocator.<String>forBackend("demo", "install demo")
                .candidate("binaries", () -> {
                    throw new IOException("initdb failed");
                })
                .candidate("embedded", () -> "embedded");

        assertThatThrownBy(locator::locate)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'binaries' is present but failed")
                .hasMessageContaining("initdb failed")
                .hasMessageContaining("-Dfencelock.demo.source=");
    }

    @Test
    void aSourceCanBeForced() {
        ServerLocator<String> locator = ServerLocator.<String>forBackend("demo", "install demo")
                .candidate("binaries", () -> "binaries")
                .candidate("embedded", () -> "embedded");

        assertThat(locator.locateOnly("embedded").server()).isEqualTo("embedded");
        assertThatThrownBy(() -> locator.locateOnly("docker"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("known: binaries, embedded");
    }
}
