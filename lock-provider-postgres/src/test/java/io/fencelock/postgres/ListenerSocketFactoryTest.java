package io.fencelock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.Test;

class ListenerSocketFactoryTest {

    @Test
    void aPeekWithNothingReceivedFailsAsPgjdbcExpectsAndEveryOtherReadIsPlain() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = new ListenerSocketFactory()
                        .createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket peer = server.accept()) {
            InputStream in = client.getInputStream();
            assertThat(client.getInputStream()).isSameAs(in);

            client.setSoTimeout(1); // pgjdbc's peek for a further message
            assertThatThrownBy(in::read).isInstanceOf(SocketTimeoutException.class);
            assertThatThrownBy(() -> in.read(new byte[4], 0, 4)).isInstanceOf(SocketTimeoutException.class);

            OutputStream out = peer.getOutputStream();
            out.write('A');
            out.flush();
            client.setSoTimeout(0); // a blocking read waits for the byte
            assertThat(in.read()).isEqualTo('A');

            out.write(new byte[] {'N', 'Z'});
            out.flush();
            client.setSoTimeout(2_000);
            byte[] two = new byte[2];
            assertThat(in.read(two, 0, 1)).isEqualTo(1);
            client.setSoTimeout(1); // a byte already received is read under the peek too
            assertThat(in.read(two, 1, 1)).isEqualTo(1);
            assertThat(two).containsExactly('N', 'Z');
        }
    }
}
