package io.fencelock.bench;

/**
 * How each peer is set up, for the report: what its documentation recommends and where the bench
 * departs from it, so that a reader can judge the figures.
 */
final class PeerSetups {
    private PeerSetups() {}

    /** The set-up of the peer the report calls {@code label}, or null for fencelock and the baselines. */
    static String of(String label) {
        return switch (label) {
            case "ShedLock (JDBC)" ->
                "ShedLock's JdbcTemplateLockProvider (ShedLock 7 has no plain-JDBC provider) with usingDbTime(),"
                        + " as its README recommends, on a JdbcTemplate over a HikariCP pool and the table its README"
                        + " gives (name primary key, lock_until, locked_at, locked_by); lockAtMostFor 30 s,"
                        + " lockAtLeastFor 0. ShedLock skips rather than waits, so a waiter retries at once.";
            case "ShedLock (Mongo)" ->
                "ShedLock's MongoLockProvider on the database, default collection (shedLock); lockAtMostFor 30 s;"
                        + " a waiter retries at once. Its unlock sets lockUntil on the name's _id alone, without"
                        + " checking who holds the lock (fencelock's release checks owner and expiry).";
            case "ShedLock (Redis)" ->
                "ShedLock's Spring Data Redis provider (SET NX PX) on a Lettuce connection factory with its"
                        + " defaults; lockAtMostFor 30 s; a waiter retries at once.";
            case "Redisson RLock", "Redisson RFencedLock" ->
                "Redisson with a single-server Config and its defaults (connection pool, timeouts, codec);"
                        + " tryLock(wait, leaseTime 30 s, ms). With a lease time Redisson's watchdog does not"
                        + " renew, as for any lock with a fixed lease; waiters are woken by pub/sub as shipped.";
            case "Spring Integration JdbcLockRegistry" ->
                "JdbcLockRegistry on a DefaultLockRepository with a JdbcTransactionManager (as its reference"
                        + " configures it), the INT_LOCK table from the schema in its jar, time to live 30 s;"
                        + " idleBetweenTries at its default, 100 ms. One registry stands for one process.";
            case "Spring Integration RedisLockRegistry" ->
                "RedisLockRegistry on a Lettuce connection factory with its defaults, expireAfter 30 s, the"
                        + " registry's default lock type and idleBetweenTries. One registry stands for one process.";
            case "Curator InterProcessMutex" ->
                "Curator's InterProcessMutex on a CuratorFramework with a 30 s session, 10 s connection timeout"
                        + " and RetryNTimes(3, 100 ms); one mutex object per lock path, reused, as its recipe page"
                        + " describes.";
            case "jetcd Lock" ->
                "jetcd's Lock client (etcd's v3lock service) with one 30 s etcd lease per thread, kept alive by"
                        + " jetcd's keepAlive (etcd treats Lock calls with the same lease as one acquisition, so"
                        + " threads sharing a lease would hold the lock together); a waiter's lock call blocks on"
                        + " the server.";
            default -> null;
        };
    }
}
