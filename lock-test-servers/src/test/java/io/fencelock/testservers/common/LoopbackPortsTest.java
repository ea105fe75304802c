package io.fencelock.testservers.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LoopbackPortsTest {

    /** What a ZooKeeper ensemble asked for when one member's election port came out as its client port. */
    @Test
    void portsAreNeverHandedOutTwiceAndAreFreeWhenHandedOut() throws IOException {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int port = LoopbackPorts.next();
            ports.add(port);
            try (ServerSocket server = new ServerSocket()) {
                server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            }
        }
        assertThat(new HashSet<>(ports)).hasSameSizeAs(ports);
    }

    /**
     * Two JVMs side by side (surefire's forks, Maven's parallel modules): a port the other JVM handed out is
     * not this one's to hand out while that JVM lives, also when nothing listens on it (its server stopped
     * by a fault, about to start again on it); once that JVM has ended, it is free again.
     */
    @Test
    void aPortAnotherJvmHandedOutIsNotHandedOutHereUntilThatJvmEnds() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process other = new ProcessBuilder(
                        java.toString(), "-cp", System.getProperty("java.class.path"), OtherJvm.class.getName())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        List<Integer> theirs = new ArrayList<>();
        try (var lines = new BufferedReader(new InputStreamReader(other.getInputStream()))) {
            for (int i = 0; i < OtherJvm.PORTS; i++) {
                theirs.add(Integer.parseInt(lines.readLine().trim()));
            }
            for (int port : theirs) {
                assertThat(LoopbackPorts.reserve(port))
                        .as("port %d, handed out by the other JVM, which still runs", port)
                        .isFalse();
            }
        } finally {
            other.getOutputStream().close(); // the other JVM ends when its input does
        }
        assertThat(other.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(LoopbackPorts.reserve(theirs.get(0)))
                .as("port %d, once the JVM that handed it out has ended", theirs.get(0))
                .isTrue();
    }

    /** Hands out {@link #PORTS} ports, prints them, and lives until its standard input ends. */
    static final class OtherJvm {
        static final int PORTS = 20;

        public static void main(String[] args) throws IOException {
            for (int i = 0; i < PORTS; i++) {
                System.out.println(LoopbackPorts.next());
            }
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the test to close our input
            }
        }
    }

    @Test
    void portsLieBelowTheRangeOutgoingConnectionsTakeTheirsFrom() throws IOException {
        Optional<Integer> ephemeralLow = LoopbackPorts.ephemeralRangeStart();
        if (System.getProperty("os.name").startsWith("Linux")) {
            assertThat(ephemeralLow)
                    .as("the kernel's ephemeral range, read on Linux")
                    .isPresent();
        }
        if (ephemeralLow.isPresent() && ephemeralLow.get() - LoopbackPorts.LOWEST >= 2_000) {
            for (int i = 0; i < 100; i++) {
                assertThat(LoopbackPorts.next()).isBetween(LoopbackPorts.LOWEST, ephemeralLow.get() - 1);
            }
        } else {
            // no room below the range (or not Linux): the kernel's own choice, still never twice
            Set<Integer> seen = new HashSet<>();
            for (int i = 0; i < 100; i++) {
                assertThat(seen.add(LoopbackPorts.next())).isTrue();
            }
        }
    }

    /**
     * A member that exits by itself after it served (as one that cannot bind its election port does)
     * fails the wait for the cluster at once, with its exit code and log, instead of leaving a cluster
     * short of a member that still serves.
     */
    @Test
    void aMemberThatExitsByItselfFailsTheWaitForTheCluster() throws IOException {
        ExitingMember member = new ExitingMember(ServerProcess.newDirectory("exiting-member"));
        try {
            member.start();
            ReplicaSet<ExitingMember> cluster =
                    new ReplicaSet<>("a cluster of one", List.of(member), Optional::empty, () -> false);
            Files.writeString(member.dir().resolve("exit"), "now");
            assertThatThrownBy(() -> cluster.awaitHealthy(Duration.ofMinutes(5)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited by itself with code 14")
                    .hasMessageContaining("cannot bind its election port");
            assertThat(member.exitedByItself()).hasValue(14);
        } finally {
            member.destroy();
        }
    }

    /** Serves at once; exits with code 14 when a file named {@code exit} appears in its directory. */
    private static final class ExitingMember extends ServerProcess {
        ExitingMember(Path dir) {
            super("exiting member", dir, "member.log", Duration.ofSeconds(30), Duration.ofSeconds(30));
        }

        @Override
        protected List<String> command() {
            return List.of(
                    "sh",
                    "-c",
                    "while [ ! -f exit ]; do sleep 0.02; done; echo 'cannot bind its election port'; exit 14");
        }

        @Override
        protected boolean serves(Process process) {
            return true;
        }

        @Override
        public String toString() {
            return "exiting member";
        }
    }
}
