package io.fencelock.zookeeper;

import io.fencelock.LockMetadata;
import io.fencelock.spi.MetadataCodec;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;

/**
 * Where the lock znodes live and what they hold: {@code <basePath>/<name>} (one child of the base
 * path per lock), with the lease id, the session timeout and the metadata as its data; the base path is created
 * when first needed.
 */
final class Znodes {
    private final String basePath;
    private final ZooKeeperCalls calls;
    private final AtomicBoolean baseReady = new AtomicBoolean();

    Znodes(String basePath, ZooKeeperCalls calls) {
        this.basePath = basePath;
        this.calls = calls;
    }

    /** Creates the base path (and its parents) once; concurrent creators are fine. Returns {@code s}. */
    Session ensureBase(Session s) {
        if (baseReady.get()) {
            return s;
        }
        StringBuilder p = new StringBuilder();
        for (String part : basePath.substring(1).split("/")) {
            p.append('/').append(part);
            Code code = calls.await(
                            "creating the base path ",
                            basePath,
                            ZooKeeperCalls.create(s, p.toString(), new byte[0], CreateMode.PERSISTENT))
                    .code();
            if (code != Code.OK && code != Code.NODEEXISTS) {
                throw calls.failure("creating the base path ", basePath, code);
            }
        }
        baseReady.set(true);
        return s;
    }

    /** The base path was deleted under us: created again. */
    void recreateBase(Session s) {
        baseReady.set(false);
        ensureBase(s);
    }

    String basePath() {
        return basePath;
    }

    String path(String name) {
        return basePath + "/" + encode(name);
    }

    String childPath(String child) {
        return basePath + "/" + child;
    }

    /** A lock name as one path component: {@code /} becomes {@code %2F}, and the names {@code .} and {@code ..} are escaped ({@code %} never occurs in names). */
    static String encode(String name) {
        String s = name.replace("/", "%2F");
        return s.equals(".") || s.equals("..") ? s.replace(".", "%2E") : s;
    }

    static String decode(String child) {
        return child.replace("%2F", "/").replace("%2E", ".");
    }

    /**
     * The data of a lock znode, one line each: the lease id; its session's timeout (for other clients'
     * {@code expiresAt}); the grant's metadata as compact JSON ({@link MetadataCodec}, no raw newline).
     * The grant time is the znode's {@code ctime}, the leader's clock when the create was applied.
     */
    static byte[] data(String leaseId, long sessionMillis, LockMetadata metadata) {
        return (leaseId + "\n" + sessionMillis + "\n" + MetadataCodec.encode(metadata))
                .getBytes(StandardCharsets.UTF_8);
    }

    static String leaseIdOf(byte[] data) {
        return line(data, 0);
    }

    static long sessionMillisOf(byte[] data) {
        try {
            return Long.parseLong(line(data, 1).trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The metadata line; {@link LockMetadata#NONE} for a znode written without one. */
    static LockMetadata metadataOf(byte[] data) {
        return MetadataCodec.decode(line(data, 2));
    }

    private static String line(byte[] data, int index) {
        String[] lines = (data == null ? "" : new String(data, StandardCharsets.UTF_8)).split("\n", 3);
        return index < lines.length ? lines[index] : "";
    }
}
