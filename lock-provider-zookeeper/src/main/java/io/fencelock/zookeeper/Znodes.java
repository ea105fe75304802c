package io.fencelock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;

/**
 * Where the lock znodes live and what they hold: {@code <basePath>/<name>} (one child of the base
 * path per lock), with the lease id and the session timeout as its data; the base path is created
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

    /** Creates the base path (and its parents) once; concurrent creators are fine. */
    void ensureBase(Session s) {
        if (baseReady.get()) {
            return;
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

    /** The data of a lock znode: the lease id and, for other clients' {@code expiresAt}, its session's timeout. */
    static byte[] data(String leaseId, long sessionMillis) {
        return (leaseId + "\n" + sessionMillis).getBytes(StandardCharsets.UTF_8);
    }

    static String leaseIdOf(byte[] data) {
        String s = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        int nl = s.lastIndexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    static long sessionMillisOf(byte[] data) {
        String s = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        try {
            return Long.parseLong(s.substring(s.lastIndexOf('\n') + 1).trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
