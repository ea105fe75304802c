package io.fencelock.testservers.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class EndpointsTest {
    private static final InetSocketAddress PROXY = InetSocketAddress.createUnresolved("127.0.0.1", 7000);

    @Test
    void oneHostHasAnAddressAndCanBeRepointed() {
        assertThat(Endpoints.single("jdbc:postgresql://10.0.0.1:6543/db?ssl=false", 5432))
                .contains(InetSocketAddress.createUnresolved("10.0.0.1", 6543));
        assertThat(Endpoints.single("jdbc:mysql://db.example/app", 3306))
                .contains(InetSocketAddress.createUnresolved("db.example", 3306));
        assertThat(Endpoints.single("redis://user:p%40ss@h:6380/2", 6379))
                .contains(InetSocketAddress.createUnresolved("h", 6380));
        assertThat(Endpoints.single("http://[::1]:2379", 2379))
                .contains(InetSocketAddress.createUnresolved("::1", 2379));

        assertThat(Endpoints.withAddress("jdbc:postgresql://10.0.0.1:6543/db?ssl=false", PROXY))
                .isEqualTo("jdbc:postgresql://127.0.0.1:7000/db?ssl=false");
        assertThat(Endpoints.withAddress("redis://user:secret@h:6380/2", PROXY))
                .isEqualTo("redis://user:secret@127.0.0.1:7000/2");
        assertThat(Endpoints.withAddress("mongodb://127.0.0.1:27017", PROXY)).isEqualTo("mongodb://127.0.0.1:7000");
        assertThat(Endpoints.withAddress("http://[::1]:2379", InetSocketAddress.createUnresolved("::1", 1)))
                .isEqualTo("http://[::1]:1");
    }

    @Test
    void severalHostsOrNoneHaveNoSingleAddress() {
        assertThat(Endpoints.single("jdbc:mysql://h1:3306,h2:3306/app", 3306)).isEmpty();
        assertThat(Endpoints.single("jdbc:postgresql:db", 5432)).isEmpty();
        assertThat(Endpoints.single("jdbc:postgresql://h:port/db", 5432)).isEmpty();
        assertThatThrownBy(() -> Endpoints.withAddress("jdbc:mysql://h1,h2/app", PROXY))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
