package io.fencelock.zookeeper;

import io.fencelock.LockInfo;
import io.fencelock.zookeeper.Holds.Hold;
import io.fencelock.zookeeper.ZooKeeperCalls.Reply;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;

/**
 * {@code inspect} and {@code list}: the lock znodes read on the control session after a {@code sync},
 * so that an answer is at least as new as every write completed before the call (a member serves
 * reads from its own copy).
 * ZooKeeper has no clock API: {@code serverTime} in {@link LockInfo} is this client's clock when the
 * answer arrived, and {@code expiresAt} of another client's lock adds its session timeout (the latest
 * it ends if its holder stopped now); for a lock of this backend it is its due time.
 */
final class LockReads {
    private final Sessions sessions;
    private final Znodes znodes;
    private final ZooKeeperCalls calls;
    private final Holds holds;

    LockReads(Sessions sessions, Znodes znodes, ZooKeeperCalls calls, Holds holds) {
        this.sessions = sessions;
        this.znodes = znodes;
        this.calls = calls;
        this.holds = holds;
    }

    Optional<LockInfo> inspect(String name) {
        Reply<byte[]> read = read(sessions.control(), "inspect of '", name);
        return read == null ? Optional.empty() : Optional.of(info(name, read.value(), read.stat()));
    }

    /** The lock's znode read after a {@code sync} on {@code c}; null when there is none. */
    private Reply<byte[]> read(Session c, String operation, String name) {
        String path = znodes.path(name);
        ZooKeeperCalls.sync(c, path);
        Reply<byte[]> read = calls.await(operation, name, ZooKeeperCalls.getData(c, path));
        if (read.code() != Code.OK && read.code() != Code.NONODE) {
            throw calls.failure(operation, name, read.code());
        }
        return read.code() == Code.OK ? read : null;
    }

    /** A {@code sync}, the children of the base path, then every matching znode's data, all at once. */
    List<LockInfo> list(String namePrefix) {
        Session c = sessions.control();
        ZooKeeperCalls.sync(c, znodes.basePath());
        Reply<List<String>> listed =
                calls.await("list of '", namePrefix, ZooKeeperCalls.getChildren(c, znodes.basePath()));
        if (listed.code() == Code.NONODE) {
            return List.of();
        }
        if (listed.code() != Code.OK) {
            throw calls.failure("list of '", namePrefix, listed.code());
        }
        Map<String, CompletableFuture<Reply<byte[]>>> reads = new LinkedHashMap<>();
        for (String child : listed.value()) {
            String name = Znodes.decode(child);
            if (Znodes.isLock(child) && name.startsWith(namePrefix)) {
                reads.put(name, ZooKeeperCalls.getData(c, znodes.childPath(child)));
            }
        }
        List<LockInfo> infos = new ArrayList<>();
        for (Map.Entry<String, CompletableFuture<Reply<byte[]>>> e : reads.entrySet()) {
            Reply<byte[]> read = calls.await("list of '", namePrefix, e.getValue());
            if (read.code() == Code.OK) {
                infos.add(info(e.getKey(), read.value(), read.stat()));
            } else if (read.code() != Code.NONODE) {
                throw calls.failure("list of '", namePrefix, read.code());
            }
        }
        infos.sort(Comparator.comparing(LockInfo::name));
        return infos;
    }

    private LockInfo info(String name, byte[] data, Stat stat) {
        Instant now = Instant.now();
        String leaseId = Znodes.leaseIdOf(data);
        Hold own = holds.get(leaseId);
        Instant expires = own != null && own.certain() ? own.expiresAt() : now.plusMillis(Znodes.sessionMillisOf(data));
        // held since the create, on the leader's clock (ctime); renewals never write the znode
        return new LockInfo(
                name,
                true,
                leaseId,
                stat.getCzxid(),
                expires,
                now,
                Znodes.metadataOf(data),
                Instant.ofEpochMilli(stat.getCtime()));
    }
}
