package io.fencelock.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The backend's command connection, replaced by a fresh one after a command gets no answer in
 * time. Lettuce pairs replies with commands in order and keeps a connection whose replies stopped
 * (a half-open TCP connection, a path that swallows replies): every later command on it times out
 * too, for good, because the first reply to arrive is taken for the oldest unanswered command.
 * Only a new connection gets out of that; the TCK's fault proxy showed it ("responses dropped").
 */
final class CommandConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CommandConnection.class);

    /** A connection and its async command API. */
    record Link(StatefulConnection<String, String> connection, RedisClusterAsyncCommands<String, String> commands) {
    }

    private final Supplier<CompletionStage<? extends StatefulConnection<String, String>>> connect;
    private final Function<StatefulConnection<String, String>, RedisClusterAsyncCommands<String, String>> commandsOf;
    private final String where;
    private final Duration drainTime;
    /** Replaced links not closed yet: commands already sent on them get their answer or time out first. */
    private final Set<Link> retiring = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean replacing = new AtomicBoolean();
    private volatile Link current;
    private volatile boolean closed;

    /**
     * @param first      the connection made at start-up
     * @param connect    opens another connection like it, asynchronously
     * @param commandsOf its async command API
     * @param drainTime  how long a replaced connection stays open: past the command timeout of anything
     *                   sent on it, so nothing can still be waiting when it closes
     */
    CommandConnection(StatefulConnection<String, String> first,
                      Supplier<CompletionStage<? extends StatefulConnection<String, String>>> connect,
                      Function<StatefulConnection<String, String>, RedisClusterAsyncCommands<String, String>> commandsOf,
                      String where, Duration drainTime) {
        this.connect = connect;
        this.drainTime = drainTime;
        this.commandsOf = commandsOf;
        this.where = where;
        this.current = new Link(first, commandsOf.apply(first));
    }

    Link current() {
        return current;
    }

    /**
     * A command sent on {@code timedOut} got no answer: opens a new connection in the background and
     * swaps it in, unless that already happened. The old connection is closed only after the drain
     * time: a caller may have picked it just before the swap, and on a connection that works again
     * (a server that was only slow) its command gets a real answer instead of "connection closed".
     */
    void replaceAfterTimeout(Link timedOut) {
        if (closed || current != timedOut || !replacing.compareAndSet(false, true)) {
            return;
        }
        connect.get().whenComplete((fresh, failure) -> {
            try {
                if (failure != null) {
                    log.debug("fencelock: could not reconnect to Redis at {} after a timeout; the next timeout retries: {}",
                            where, failure.toString());
                    return;
                }
                if (closed || current != timedOut) {
                    fresh.closeAsync();
                    return;
                }
                retiring.add(timedOut);
                current = new Link(fresh, commandsOf.apply(fresh));
                CompletableFuture.delayedExecutor(drainTime.toNanos(), TimeUnit.NANOSECONDS)
                        .execute(() -> retire(timedOut));
                log.info("fencelock: replaced the Redis connection to {} after a command got no answer", where);
            } finally {
                replacing.set(false);
            }
        });
    }

    private void retire(Link link) {
        if (retiring.remove(link)) {
            link.connection().closeAsync();
        }
    }

    @Override
    public void close() {
        closed = true;
        current.connection().close();
        for (Link link : retiring) {
            if (retiring.remove(link)) {
                link.connection().close();
            }
        }
    }
}
