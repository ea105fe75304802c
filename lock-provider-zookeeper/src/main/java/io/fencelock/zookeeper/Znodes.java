package io.fencelock.zookeeper;

import io.fencelock.LockMetadata;
import io.fencelock.spi.MetadataCodec;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;

/**
 * Where the lock znodes live and what they hold: {@code <basePath>/<name>} (one child of the base
 * path per lock), with the lease id, the session timeout and the metadata as its data; and beside each,
 * its grant's <b>lease marker</b> {@code <basePath>/%leases/<name>%:<lease id>}, an empty ephemeral znode
 * created and deleted with it in one {@code multi} ({@link #grant}, {@link #end}). The base path and the
 * markers' parent are created when first needed.
 *
 * <p>Why the marker: ZooKeeper's conditional writes compare only data versions, 0 for every lock znode,
 * so no delete of {@code <basePath>/<name>} alone can be tied to one grant. A marker exists exactly while
 * the lock znode at its name is its lease's: both are created in one {@code multi} in one session, every
 * end of a grant deletes both in one {@code multi} (a release, a give-back, a hand-over, a forced release),
 * and a session's expiry removes all its ephemeral znodes in one transaction. So {@code multi(delete lock,
 * delete marker)} ends that lease's grant and nothing else, in one round trip and without a read: when the
 * marker is gone, the whole {@code multi} fails and the lock znode, whoever's it is now, stays.
 */
final class Znodes {
    /** The markers' parent, a child of the base path no lock name can have: names never contain {@code %}. */
    static final String LEASES = "%leases";

    private final String basePath;
    private final String leasesPath;
    private final ZooKeeperCalls calls;
    private final AtomicBoolean baseReady = new AtomicBoolean();

    Znodes(String basePath, ZooKeeperCalls calls) {
        this.basePath = basePath;
        this.leasesPath = basePath + "/" + LEASES;
        this.calls = calls;
    }

    /** Creates the base path (and its parents) and the markers' parent once; concurrent creators are fine. Returns {@code s}. */
    Session ensureBase(Session s) {
        if (baseReady.get()) {
            return s;
        }
        List<String> paths = new ArrayList<>();
        StringBuilder p = new StringBuilder();
        for (String part : basePath.substring(1).split("/")) {
            paths.add(p.append('/').append(part).toString());
        }
        paths.add(leasesPath);
        for (String path : paths) {
            Code code = calls.await(
                            "creating the base path ",
                            basePath,
                            ZooKeeperCalls.create(s, path, new byte[0], CreateMode.PERSISTENT))
                    .code();
            if (code != Code.OK && code != Code.NODEEXISTS) {
                throw calls.failure("creating the base path ", basePath, code);
            }
        }
        baseReady.set(true);
        return s;
    }

    /**
     * The ops of a grant: the lock znode (as {@code create2}, so its answer carries the stat and so the
     * czxid, the token) and its lease marker, both ephemeral in the session the {@code multi} is sent on.
     */
    List<Op> grant(String name, String leaseId, byte[] data) {
        return List.of(
                Op.create(
                        path(name),
                        data,
                        CreateOptions.newBuilder(ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL)
                                .build()),
                Op.create(markerPath(name, leaseId), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL));
    }

    /** The ops that end the grant of {@code leaseId} on {@code name}, and only that grant (see the class comment). */
    List<Op> end(String name, String leaseId) {
        return List.of(Op.delete(path(name), -1), Op.delete(markerPath(name, leaseId), -1));
    }

    /**
     * The marker of {@code leaseId}'s grant of {@code name}. One name per (name, lease id): an encoded name
     * has {@code %} only before {@code 2}, so the first {@code %:} ends it, and the lease id is URL-encoded
     * (any lease id becomes a valid path component).
     */
    String markerPath(String name, String leaseId) {
        return leasesPath + "/" + encode(name) + "%:" + URLEncoder.encode(leaseId, StandardCharsets.UTF_8);
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

    /** Whether a child of the base path is a lock znode (not the markers' parent). */
    static boolean isLock(String child) {
        return !child.equals(LEASES);
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
