package io.fencelock.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletionStage;
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
    private final AtomicBoolean replacing = new AtomicBoolean();
    private volatile Link current;
    private volatile boolean closed;

    /**
     * @param first      the connection made at start-up
     * @param connect    opens another connection like it, asynchronously
     * @param commandsOf its async command API
     */
    CommandConnection(StatefulConnection<String, String> first,
                      Supplier<CompletionStage<? extends StatefulConnection<String, String>>> connect,
                      Function<StatefulConnection<String, String>, RedisClusterAsyncCommands<String, String>> commandsOf,
                      String where) {
        this.connect = connect;
        this.commandsOf = commandsOf;
        this.where = where;
        this.current = new Link(first, commandsOf.apply(first));
    }

    Link current() {
        return current;
    }

    /**
     * A command sent on {@code timedOut} got no answer: opens a new connection in the background and
     * swaps it in, unless that already happened. Commands still waiting on the old connection fail
     * when it closes (their outcome is unknown, as it was anyway).
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
                current = new Link(fresh, commandsOf.apply(fresh));
                timedOut.connection().closeAsync();
                log.info("fencelock: replaced the Redis connection to {} after a command got no answer", where);
            } finally {
                replacing.set(false);
            }
        });
    }

    @Override
    public void close() {
        closed = true;
        current.connection().close();
    }
}
