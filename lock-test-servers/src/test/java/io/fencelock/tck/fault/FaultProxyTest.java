package io.fencelock.tck.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fencelock.testservers.redis.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The proxy in front of a real Redis, spoken to in raw RESP over plain sockets so that no client
 * library's retries or reconnects blur what the proxy did to the bytes.
 */
class FaultProxyTest {
    /** How long a test waits for a reply that must not come: the bound of a negative check. */
    private static final int SILENCE_MILLIS = 500;
    /** Only stops a hang: replies that must come arrive in milliseconds. */
    private static final int REPLY_TIMEOUT_MILLIS = 5_000;

    private static InetSocketAddress redis;
    private static String user;
    private static String password;

    @BeforeAll
    static void findRedis() {
        URI uri = URI.create(RedisServer.shared().uri());
        assumeTrue("redis".equals(uri.getScheme()), "needs a plain redis:// server, not " + uri.getScheme());
        redis = new InetSocketAddress(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort());
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = colon < 0 ? null : decode(userInfo.substring(0, colon));
            password = decode(colon < 0 ? userInfo : userInfo.substring(colon + 1));
            if (user != null && user.isEmpty()) {
                user = null;
            }
        }
    }

    @Test
    void passesBytesBothWays() throws IOException {
        String key = uniqueKey();
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp client = Resp.connect(proxy.address())) {
            assertThat(proxy.mode()).isEqualTo("pass");
            assertThat(client.call("PING")).isEqualTo("+PONG");
            assertThat(client.call("SET", key, "v", "EX", "60")).isEqualTo("+OK");
            assertThat(client.call("GET", key)).isEqualTo("$v");
            assertThat(proxy.connectionsAccepted()).isEqualTo(1);
            assertThat(proxy.openConnections()).isEqualTo(1);
        }
    }

    @Test
    void latencyDelaysEachDirectionOfAnOpenConnection() throws IOException {
        Duration delay = Duration.ofMillis(200);
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp client = Resp.connect(proxy.address())) {
            assertThat(client.call("PING")).isEqualTo("+PONG");

            proxy.latency(delay);
            assertThat(proxy.mode()).isEqualTo("latency 200ms");
            long start = System.nanoTime();
            assertThat(client.call("PING")).isEqualTo("+PONG");
            Duration roundTrip = Duration.ofNanos(System.nanoTime() - start);

            assertThat(roundTrip)
                    .as("the request and the reply each delayed")
                    .isGreaterThanOrEqualTo(delay.multipliedBy(2));
            proxy.heal();
            assertThat(client.call("PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void droppedResponsesLeaveTheRequestAppliedAndTheClientUninformed() throws IOException {
        String key = uniqueKey();
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp client = Resp.connect(proxy.address());
                Resp direct = Resp.connect(redis)) {
            assertThat(client.call("PING")).isEqualTo("+PONG");

            proxy.dropResponses();
            assertThat(proxy.mode()).isEqualTo("drop responses");
            client.send("SET", key, "applied", "EX", "60");
            assertThatThrownBy(() -> client.readReply(SILENCE_MILLIS)).isInstanceOf(SocketTimeoutException.class);
            awaitCondition(() -> "$applied".equals(direct.callUnchecked("GET", key)), "the SET reaches the server");

            proxy.heal();
            try (Resp fresh = Resp.connect(proxy.address())) {
                assertThat(fresh.call("GET", key)).isEqualTo("$applied");
            }
            // The open connection survived; the lost "+OK" stays lost, so the next reply is the PING's.
            assertThat(client.call("PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void blackholeLosesRequestsAndRepliesForGood() throws IOException {
        String key = uniqueKey();
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp client = Resp.connect(proxy.address());
                Resp direct = Resp.connect(redis)) {
            assertThat(client.call("PING")).isEqualTo("+PONG");

            proxy.blackhole();
            assertThat(proxy.mode()).isEqualTo("blackhole");
            client.send("SET", key, "lost", "EX", "60");
            assertThatThrownBy(() -> client.readReply(SILENCE_MILLIS)).isInstanceOf(SocketTimeoutException.class);
            assertThat(proxy.openConnections()).as("the sockets stay open").isEqualTo(1);

            proxy.heal();
            // Had the SET been held back rather than lost, its "+OK" would come before this "+PONG".
            assertThat(client.call("PING")).isEqualTo("+PONG");
            assertThat(direct.call("GET", key)).isEqualTo("$-1");
        }
    }

    @Test
    void blackholedNewConnectionGetsNothingUntilHealed() throws IOException {
        try (FaultProxy proxy = FaultProxy.start(redis)) {
            proxy.blackhole();
            try (Resp client = Resp.connect(proxy.address())) {
                client.send("PING");
                assertThatThrownBy(() -> client.readReply(SILENCE_MILLIS)).isInstanceOf(SocketTimeoutException.class);
                proxy.heal();
                assertThat(client.call("PING")).isEqualTo("+PONG");
            }
        }
    }

    @Test
    void resetBreaksOpenConnectionsOnceAndNewOnesWork() throws IOException {
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp client = Resp.connect(proxy.address())) {
            assertThat(client.call("PING")).isEqualTo("+PONG");

            proxy.reset();
            assertThat(proxy.openConnections()).isZero();
            assertThatThrownBy(() -> client.call("PING"))
                    .as("a reset, not an orderly close")
                    .isInstanceOf(SocketException.class);

            assertThat(proxy.mode()).isEqualTo("pass");
            try (Resp fresh = Resp.connect(proxy.address())) {
                assertThat(fresh.call("PING")).isEqualTo("+PONG");
            }
        }
    }

    @Test
    void refuseResetsOpenAndNewConnectionsUntilHealed() throws IOException {
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp open = Resp.connect(proxy.address())) {
            assertThat(open.call("PING")).isEqualTo("+PONG");

            proxy.refuse();
            assertThat(proxy.mode()).isEqualTo("refuse");
            assertThatThrownBy(() -> open.call("PING")).isInstanceOf(SocketException.class);
            for (int attempt = 0; attempt < 3; attempt++) {
                assertThatThrownBy(() -> {
                            try (Resp refused = Resp.connect(proxy.address())) {
                                refused.call("PING");
                            }
                        })
                        .isInstanceOf(SocketException.class);
            }
            assertThat(proxy.connectionsAccepted()).isEqualTo(4);

            proxy.heal();
            try (Resp fresh = Resp.connect(proxy.address())) {
                assertThat(fresh.call("PING")).isEqualTo("+PONG");
            }
        }
    }

    @Test
    void closeEndsEveryConnectionAndThread() throws IOException {
        try (FaultProxy proxy = FaultProxy.start(redis);
                Resp first = Resp.connect(proxy.address());
                Resp second = Resp.connect(proxy.address())) {
            String threadPrefix = "fault-proxy-" + proxy.address().getPort() + "-";
            assertThat(first.call("PING")).isEqualTo("+PONG");
            assertThat(second.call("PING")).isEqualTo("+PONG");
            proxy.latency(Duration.ofSeconds(30)); // a chunk held back must not hold up close()
            first.send("PING");
            assertThat(proxy.openConnections()).isEqualTo(2);
            assertThat(liveThreads(threadPrefix)).isPositive();

            proxy.close();
            proxy.close(); // idempotent, and once more by try-with-resources

            assertThat(proxy.openConnections()).isZero();
            assertThat(liveThreads(threadPrefix)).isZero();
            assertThatThrownBy(() -> second.readReply(REPLY_TIMEOUT_MILLIS))
                    .isInstanceOf(IOException.class)
                    .isNotInstanceOf(SocketTimeoutException.class);
            assertThatThrownBy(() -> Resp.connect(proxy.address()))
                    .as("nobody listens any more")
                    .isInstanceOf(IOException.class);
        }
    }

    @Test
    void unreachableServerResetsTheClient() throws IOException {
        InetSocketAddress nobody;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            nobody = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
        } // closed: nothing listens there now
        try (FaultProxy proxy = FaultProxy.start(nobody)) {
            assertThatThrownBy(() -> {
                        try (Resp client = Resp.connect(proxy.address())) {
                            client.call("PING");
                        }
                    })
                    .isInstanceOf(SocketException.class);
            awaitCondition(() -> proxy.openConnections() == 0, "the failed connection is forgotten");
        }
    }

    private static long liveThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(prefix) && t.isAlive())
                .count();
    }

    private static String uniqueKey() {
        return "fencelock:fault-proxy-test:" + UUID.randomUUID();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static void awaitCondition(BooleanSupplier condition, String what) {
        long deadline =
                System.nanoTime() + Duration.ofMillis(REPLY_TIMEOUT_MILLIS).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("timed out waiting until " + what).isLessThan(deadline);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting until " + what, e);
            }
        }
    }

    /**
     * A bare RESP connection. Replies are rendered on one line: "+OK", "-ERR ...", ":1", "$value"
     * for a bulk string and "$-1" for none; arrays are not needed here.
     */
    private static final class Resp implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        private Resp(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        static Resp connect(InetSocketAddress address) throws IOException {
            Socket socket = new Socket();
            try {
                socket.setTcpNoDelay(true);
                socket.connect(address, REPLY_TIMEOUT_MILLIS);
                Resp resp = new Resp(socket);
                if (password != null) {
                    resp.authenticate(); // directly or through the proxy: the same server either way
                }
                return resp;
            } catch (IOException | RuntimeException e) {
                socket.close();
                throw e;
            }
        }

        private void authenticate() throws IOException {
            String reply = user == null ? call("AUTH", password) : call("AUTH", user, password);
            assertThat(reply).as("AUTH").isEqualTo("+OK");
        }

        String call(String... command) throws IOException {
            send(command);
            return readReply(REPLY_TIMEOUT_MILLIS);
        }

        String callUnchecked(String... command) {
            try {
                return call(command);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        void send(String... command) throws IOException {
            StringBuilder request =
                    new StringBuilder("*").append(command.length).append("\r\n");
            for (String part : command) {
                request.append('$')
                        .append(part.getBytes(StandardCharsets.UTF_8).length)
                        .append("\r\n")
                        .append(part)
                        .append("\r\n");
            }
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        String readReply(int timeoutMillis) throws IOException {
            socket.setSoTimeout(timeoutMillis);
            String line = readLine();
            if (line.startsWith("$") && !line.equals("$-1")) {
                byte[] value = in.readNBytes(Integer.parseInt(line.substring(1)) + 2);
                return "$" + new String(value, 0, value.length - 2, StandardCharsets.UTF_8);
            }
            return line;
        }

        private String readLine() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int previous = -1;
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new EOFException("connection closed after \"" + line + "\"");
                }
                if (previous == '\r' && b == '\n') {
                    byte[] bytes = line.toByteArray();
                    return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
                }
                line.write(b);
                previous = b;
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
