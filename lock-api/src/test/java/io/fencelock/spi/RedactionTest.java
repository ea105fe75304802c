package io.fencelock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RedactionTest {
    private static final String SPECIAL = "p@ss:w/rd%40?&=";
    private static final String ENCODED = URLEncoder.encode(SPECIAL, StandardCharsets.UTF_8);

    @Test
    void userInfoIsRemovedAndEveryParameterValueMasked() {
        assertThat(Redaction.uri(
                        "jdbc:mysql://app:pw@db:3306/app?password1=one&password2=two&password3=three&useSSL=true"))
                .isEqualTo("jdbc:mysql://db:3306/app?password1=***&password2=***&password3=***&useSSL=***");
        assertThat(Redaction.uri("jdbc:mariadb://verify:s3cret@localhost:3306/db"))
                .isEqualTo("jdbc:mariadb://localhost:3306/db");
        assertThat(Redaction.uri("jdbc:postgresql://db:5432/app?user=bob&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app?user=***&password=***&ssl=***");
        assertThat(Redaction.uri("jdbc:postgresql://h1:5432,h2:5433/app?sslpassword=x&targetServerType=primary"))
                .isEqualTo("jdbc:postgresql://h1:5432,h2:5433/app?sslpassword=***&targetServerType=***");
        assertThat(Redaction.uri("jdbc:postgresql:app?password=x")).isEqualTo("jdbc:postgresql:app?password=***");
        assertThat(Redaction.uri("mongodb://bob:s3cret@h1:27017,h2:27018/db?replicaSet=rs&authSource=admin"))
                .isEqualTo("mongodb://h1:27017,h2:27018/db?replicaSet=***&authSource=***");
        assertThat(Redaction.uri("mongodb+srv://bob:s3cret@cluster0.example.net/?retryWrites=true"))
                .isEqualTo("mongodb+srv://cluster0.example.net/?retryWrites=***");
        assertThat(Redaction.uri("redis://:pw@host:6379/2")).isEqualTo("redis://host:6379/2");
        assertThat(Redaction.uri("rediss://user:pw@host:6380")).isEqualTo("rediss://host:6380");
        assertThat(Redaction.uri("redis-sentinel://pw@s1:26379,s2:26379/0#mymaster"))
                .isEqualTo("redis-sentinel://s1:26379,s2:26379/0#mymaster");
        assertThat(Redaction.uri("redis-cluster://pw@n1:7000,n2:7001")).isEqualTo("redis-cluster://n1:7000,n2:7001");
        assertThat(Redaction.uri("redis-socket:///tmp/redis.sock?timeout=5s"))
                .isEqualTo("redis-socket:///tmp/redis.sock?timeout=***");
        assertThat(Redaction.uri("etcd://u:p%2Fw@h1:2379,h2:2379")).isEqualTo("etcd://h1:2379,h2:2379");
        assertThat(Redaction.uri("jdbc:oracle:thin:scott/tiger@//db:1521/x"))
                .isEqualTo("jdbc:oracle:thin:@//db:1521/x");
        assertThat(Redaction.uri("jdbc:oracle:thin:scott/tiger@db:1521:orcl"))
                .isEqualTo("jdbc:oracle:thin:@db:1521:orcl");
        assertThat(Redaction.uri("jdbc:sqlserver://db:1433;user=sa;password=x"))
                .isEqualTo("jdbc:sqlserver://db:1433;user=***;password=***");
        assertThat(Redaction.uri("jdbc:mysql://address=(host=h)(port=3306)(password=pw)/db"))
                .doesNotContain("pw")
                .contains("address=(host=***)(port=***)(password=***)/db");
        assertThat(Redaction.uri("jdbc:mysql://db/app?flag&password=x"))
                .isEqualTo("jdbc:mysql://db/app?***&password=***");
        assertThat(Redaction.uri("jdbc:mysql://db:3306/app")).isEqualTo("jdbc:mysql://db:3306/app");
        assertThat(Redaction.uri(null)).isEqualTo("null");
        assertThat(Redaction.uri("")).isEqualTo("");
    }

    @Test
    void specialCharactersInTheUserInfoNeverLeak() {
        for (String scheme :
                new String[] {"jdbc:mysql://", "jdbc:postgresql://", "mongodb://", "redis://", "etcd://"}) {
            for (String userInfo :
                    new String[] {"app:" + SPECIAL, ":" + SPECIAL, "app:" + ENCODED, "a%40pp:" + ENCODED}) {
                String redacted = Redaction.uri(scheme + userInfo + "@db.example:1234/x?k=" + ENCODED);
                assertThat(redacted).as(scheme + userInfo).isEqualTo(scheme + "db.example:1234/x?k=***");
            }
        }
        // an '@' in a parameter's value is the value's, not the end of a user-info
        assertThat(Redaction.uri("jdbc:postgresql://db/app?password=a@b"))
                .isEqualTo("jdbc:postgresql://db/app?password=***");
        assertThat(Redaction.uri("jdbc:postgresql://db:5432/app?user=x&password=p@ss&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app?user=***&password=***&ssl=***");
        assertThat(Redaction.uri("mongodb://u:pw@host/db?x=a@b")).isEqualTo("mongodb://host/db?x=***");
        // a raw '?', '/' or '#' in the password, then the hosts: all of it is user-info
        assertThat(Redaction.uri("redis://:p?ss@host:6379")).isEqualTo("redis://host:6379");
        assertThat(Redaction.uri("redis://u:12/ab@host")).isEqualTo("redis://host");
        assertThat(Redaction.uri("redis://u:p#w@host")).isEqualTo("redis://host");
        // the password again in a later parameter: the user-info ends at the last '@' outside a value
        assertThat(Redaction.uri("etcd://:" + SPECIAL + "@h:2379/x?password1=" + SPECIAL))
                .isEqualTo("etcd://h:2379/x?password1=***&=***");
        assertThat(Redaction.uri("redis://u:a/b@c@host")).isEqualTo("redis://host");
        // a value holding '&', ';' or '#': every piece is masked
        assertThat(Redaction.uri("jdbc:mysql://db/app?password=a&b;c#d"))
                .isEqualTo("jdbc:mysql://db/app?password=***&***;***");
    }

    @Test
    void aDriversMessageKeepsItsWordsAndLosesOnlyTheEchoes() {
        String url = "jdbc:mariadb://verify:" + ENCODED + "@localhost:3306/db?password1=one1&password2=two2";
        assertThat(Redaction.message("Access denied for user 'verify'@'localhost' (using password: YES)", url))
                .isEqualTo("Access denied for user 'verify'@'localhost' (using password: YES)");
        assertThat(Redaction.message("Cannot connect to " + url + " now", url))
                .isEqualTo("Cannot connect to jdbc:mariadb://localhost:3306/db?password1=***&password2=*** now");
        assertThat(Redaction.message("bad authority 'verify:" + ENCODED + "@localhost:3306'", url))
                .isEqualTo("bad authority 'localhost:3306'");
        assertThat(Redaction.message("bad authority verify:" + SPECIAL + "@localhost", url))
                .isEqualTo("bad authority localhost");
        assertThat(Redaction.message("option password2=two2 is unknown", url))
                .isEqualTo("option password2=*** is unknown");
        assertThat(Redaction.message("mysql://verify:x@h/db?password3=y failed", null))
                .isEqualTo("mysql://h/db?password3=*** failed");
        assertThat(Redaction.message(null, url)).isEqualTo("null");

        String mongo = "mongodb://u:" + SPECIAL + "@127.0.0.1:27017";
        String urlencoded = "The connection string contains invalid user information. If the username or password"
                + " contains a colon (:) or an at-sign (@) then it must be urlencoded";
        assertThat(Redaction.message(urlencoded, mongo)).isEqualTo(urlencoded);
        // a parser that split the raw string elsewhere quotes pieces of the password: withheld whole
        assertThat(Redaction.message(
                        "The connection string contains an invalid host 'ss:w'. The port 'w' is not a valid", mongo))
                .isEqualTo(Redaction.WITHHELD);
        assertThat(Redaction.message("password was " + SPECIAL, mongo)).isEqualTo(Redaction.WITHHELD);
        assertThat(Redaction.message("Access denied for user 'verify'@'h'", "jdbc:mysql://h/db?user=verify&password=x"))
                .isEqualTo("Access denied for user 'verify'@'h'");
        assertThat(Redaction.message("Exception authenticating MongoCredential{userName='u', source='admin'}", mongo))
                .contains("userName='u'");
    }

    @Test
    void portsAreCheckedByStructure() {
        assertThat(ConnectionString.parse("redis://u:pw@127.0.0.1:6379")
                        .requireValidPorts()
                        .hosts())
                .isEqualTo("127.0.0.1:6379");
        ConnectionString.parse("mongodb://a:1,b:65535,[::1]:27017,c/db").requireValidPorts();
        ConnectionString.parse("jdbc:mysql://address=(host=h)(port=x)/db").requireValidPorts();
        for (String bad : new String[] {
            "redis://u:s3cret@127.0.0.1:notaport",
            "redis://h:0",
            "etcd://a:2379,b:65536",
            "mongodb://[::1]:x",
            "jdbc:postgresql://h:/db"
        }) {
            assertThatThrownBy(() -> ConnectionString.parse(bad).requireValidPorts())
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("port '")
                    .hasMessageContaining("1 to 65535")
                    .hasMessageNotContaining("s3cret");
        }
        assertThat(ConnectionString.parse("redis://u:" + SPECIAL + "@h:1").hasUserInfo())
                .isTrue();
        assertThat(ConnectionString.parse("redis://h:1").hasUserInfo()).isFalse();
    }
}
