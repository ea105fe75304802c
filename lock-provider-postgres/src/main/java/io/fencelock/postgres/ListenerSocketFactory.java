package io.fencelock.postgres;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.SocketFactory;

/**
 * The sockets of the release listener's own connection (pgjdbc's {@code socketFactory}): a peek for
 * more messages answers at once instead of waiting a millisecond.
 *
 * <p>After every notification it reads, pgjdbc's {@code getNotifications(timeout)} asks whether
 * another message is pending by setting the socket's timeout to 1 ms and reading
 * ({@code PGStream.hasMessagePending}, 42.7). On an idle listener nothing is pending, so every
 * notification reached the engine a full millisecond late: measured here, a {@code NOTIFY} was heard
 * 1.1 ms after the notifying statement returned, and 0.05 ms with these sockets. A read under a 1 ms
 * timeout with no byte received yet fails at once with the same {@link SocketTimeoutException}
 * pgjdbc expects from that peek; a message still on its way is read by the listener's next call.
 * Every other read (no timeout, or the driver's socket timeout of whole seconds) is untouched.
 *
 * <p>Public only because pgjdbc instantiates it by class name; not an API.
 */
public final class ListenerSocketFactory extends SocketFactory {
    /** pgjdbc's timeout for its peek. */
    private static final int PEEK_MILLIS = 1;

    /** For pgjdbc, which instantiates it by name. */
    public ListenerSocketFactory() {}

    @Override
    public Socket createSocket() {
        return new PromptPeekSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connected(new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        return connected(new InetSocketAddress(address, port), new InetSocketAddress(localAddress, localPort));
    }

    private static Socket connected(InetSocketAddress to, InetSocketAddress... from) throws IOException {
        Socket s = new PromptPeekSocket();
        try {
            for (InetSocketAddress local : from) {
                s.bind(local);
            }
            s.connect(to);
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /** A plain socket whose reads under pgjdbc's 1 ms peek timeout do not wait. */
    static final class PromptPeekSocket extends Socket {
        private final ReentrantLock opening = new ReentrantLock();
        private volatile int timeoutMillis;
        private volatile InputStream input;

        @Override
        public void setSoTimeout(int timeout) throws SocketException {
            super.setSoTimeout(timeout);
            timeoutMillis = timeout;
        }

        @Override
        public InputStream getInputStream() throws IOException {
            InputStream s = input;
            if (s != null) {
                return s;
            }
            opening.lock();
            try {
                if (input == null) {
                    input = new PromptPeek(super.getInputStream());
                }
                return input;
            } finally {
                opening.unlock();
            }
        }

        private final class PromptPeek extends FilterInputStream {
            PromptPeek(InputStream raw) {
                super(raw);
            }

            @Override
            public int read() throws IOException {
                nothingPendingFailsAtOnce();
                return super.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                nothingPendingFailsAtOnce();
                return super.read(b, off, len);
            }

            private void nothingPendingFailsAtOnce() throws IOException {
                if (timeoutMillis == PEEK_MILLIS && in.available() == 0) { // in: the socket's own stream
                    throw new SocketTimeoutException("nothing pending");
                }
            }
        }
    }
}
