package io.fencelock.redis;

import io.fencelock.LockBackendException;
import io.fencelock.spi.Replies;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backend's command connection, replaced by a fresh one after a command gets no answer in
 * time. Lettuce pairs replies with commands in order and keeps a connection whose replies stopped
 * (a half-open TCP connection, a path that swallows replies): every later command on it times out
 * too, for good, because the first reply to arrive is taken for the oldest unanswered command.
 * Only a new connection gets out of that; the TCK's fault proxy showed it ("responses dropped").
 * Commands go out with {@link #eval} or {@link Call}, and their replies are taken with {@link #await}.
 */
final class CommandConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CommandConnection.class);
    /** Extra wait beyond Lettuce's own command timeout, only so that a lost completion cannot hang a caller. */
    private static final long AWAIT_SLACK_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A connection and its async command API. */
    record Link(StatefulConnection<String, String> connection, RedisClusterAsyncCommands<String, String> commands) {}

    /** A command's reply to come, and the connection it went out on (replaced if the reply never comes). */
    record Call<T>(Link link, CompletableFuture<T> reply) {}

    private final Supplier<CompletionStage<? extends StatefulConnection<String, String>>> connect;
    private final Function<StatefulConnection<String, String>, RedisClusterAsyncCommands<String, String>> commandsOf;
    private final String where;
    private final Duration commandTimeout;
    private final Duration drainTime;
    /** Replaced links not closed yet: commands already sent on them get their answer or time out first. */
    private final Set<Link> retiring = ConcurrentHashMap.newKeySet();

    private final AtomicBoolean replacing = new AtomicBoolean();
    private volatile Link current;
    private volatile boolean closed;

    /**
     * @param first      the connection made at start-up
     * @param connect    opens another connection like it, asynchronously
     * @param commandsOf     its async command API
     * @param where          the server for messages and log lines, without credentials
     * @param commandTimeout Lettuce's command timeout; a replaced connection stays open for twice as
     *                       long, past the timeout of anything sent on it, so nothing can still be
     *                       waiting when it closes
     */
    CommandConnection(
            StatefulConnection<String, String> first,
            Supplier<CompletionStage<? extends StatefulConnection<String, String>>> connect,
            Function<StatefulConnection<String, String>, RedisClusterAsyncCommands<String, String>> commandsOf,
            String where,
            Duration commandTimeout) {
        this.connect = connect;
        this.commandTimeout = commandTimeout;
        this.drainTime = commandTimeout.multipliedBy(2);
        this.commandsOf = commandsOf;
        this.where = where;
        this.current = new Link(first, commandsOf.apply(first));
    }

    Link current() {
        return current;
    }

    /** EVALSHA, and EVAL when the server does not have the script (first use, a restart, SCRIPT FLUSH). */
    static <T> Call<T> eval(Link link, Scripts.Script script, ScriptOutputType type, String[] keys, String... args) {
        RedisClusterAsyncCommands<String, String> redis = link.commands();
        CompletableFuture<T> bySha =
                redis.<T>evalsha(script.sha1(), type, keys, args).toCompletableFuture();
        return new Call<>(
                link,
                bySha.exceptionallyCompose(e -> RedisFailures.unwrap(e) instanceof RedisNoScriptException
                        ? redis.<T>eval(script.source(), type, keys, args).toCompletableFuture()
                        : CompletableFuture.failedFuture(e)));
    }

    /**
     * Waits for a reply. {@code operation + subject} names the call in a failure ("tryAcquire of '" +
     * name), built only then: the hot path allocates no message. An interrupt does not abandon a
     * command already sent (its outcome would be unknown): the wait goes on to the reply or the
     * timeout, and the interrupt is set again afterwards. A timeout replaces the connection.
     */
    <T> T await(String operation, String subject, Call<T> call) {
        CompletableFuture<T> future = call.reply();
        try {
            return Replies.await(future, commandTimeout.toNanos() + AWAIT_SLACK_NANOS);
        } catch (ExecutionException e) {
            if (RedisFailures.unwrap(e.getCause()) instanceof RedisCommandTimeoutException) {
                replaceAfterTimeout(call.link());
            }
            throw RedisFailures.failure(what(operation, subject), e.getCause(), where);
        } catch (TimeoutException e) {
            future.cancel(false);
            replaceAfterTimeout(call.link());
            throw new LockBackendException(
                    "Redis " + what(operation, subject) + " got no answer from " + where + " within " + commandTimeout,
                    e,
                    true);
        } catch (CancellationException e) {
            throw new LockBackendException(
                    "Redis " + what(operation, subject) + " on " + where + " was cancelled", e, true);
        }
    }

    private static String what(String operation, String subject) {
        return operation + subject + (operation.endsWith("'") ? "'" : "");
    }

    /**
     * A command sent on {@code timedOut} got no answer: opens a new connection in the background and
     * swaps it in, unless that already happened. The old connection is closed only after the drain
     * time: a caller may have picked it just before the swap, and on a connection that works again
     * (a server that was only slow) its command gets a real answer instead of "connection closed".
     */
    private void replaceAfterTimeout(Link timedOut) {
        if (closed || current != timedOut || !replacing.compareAndSet(false, true)) {
            return;
        }
        connect.get().whenComplete((fresh, failure) -> {
            try {
                if (failure != null) {
                    log.debug(
                            "fencelock: could not reconnect to Redis at {} after a timeout; the next timeout retries: {}",
                            where,
                            failure.toString());
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
