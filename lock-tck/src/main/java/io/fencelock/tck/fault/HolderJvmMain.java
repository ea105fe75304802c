package io.fencelock.tck.fault;

import io.fencelock.LeaseLostException;
import io.fencelock.LockOptions;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.RecordedClient;
import io.fencelock.tck.WarmUp;
import io.fencelock.tck.history.History;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The holder that {@link HolderJvm} runs in a child JVM: opens the backend from the connection it
 * reads on stdin, takes the lock under {@code runExclusively} (or the write grant of a read-write
 * lock under {@code runWriting}) and writes to the parent's fenced
 * resource in a loop, for a given time (then releases) or until the lease is lost; after a loss it
 * makes one more write with its old token, as a zombie that never checked would. Every history
 * event goes to stdout as it happens.
 */
public final class HolderJvmMain {
    private HolderJvmMain() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String uri = null;
        Map<String, String> properties = new HashMap<>();
        String name = null;
        long ttlMillis = 0;
        long holdMillis = 0;
        int process = 0;
        boolean writeGrant = false;
        for (String line; (line = in.readLine()) != null && !line.equals("start"); ) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "sync" -> out.println("clock " + System.nanoTime());
                case "connection" -> uri = EventLines.decode(f[1]);
                case "property" -> properties.put(EventLines.decode(f[1]), EventLines.decode(f[2]));
                case "hold" -> {
                    name = EventLines.decode(f[1]);
                    ttlMillis = Long.parseLong(f[2]);
                    process = Integer.parseInt(f[3]);
                    holdMillis = Long.parseLong(f[4]);
                    writeGrant = f.length > 5 && f[5].equals("write");
                }
                default -> throw new IllegalArgumentException("unknown instruction " + f[0]);
            }
        }
        History history = new History(e -> out.println(EventLines.event(e)));
        LockOptions options = LockOptions.builder()
                .ttl(Duration.ofMillis(ttlMillis))
                .autoRenew(true)
                .build();
        WarmUp.warm(new ClientConnection(uri, properties).open(), name, options);
        long[] token = new long[1];
        String[] leaseId = new String[1];
        long holdNanos = holdMillis * 1_000_000;
        try (RecordedClient client =
                new RecordedClient(process, history, new ClientConnection(uri, properties).open(), options)) {
            try {
                String lockName = name;
                RecordedClient.Runner<Object> runner = writeGrant
                        ? t -> client.client().readWriteLock(lockName).runWriting(Duration.ofSeconds(20), t)
                        : t -> client.client().runExclusively(lockName, Duration.ofSeconds(20), t);
                client.runHolding(name, writeGrant ? "WRITE 1" : "runExclusively", runner, lease -> {
                    token[0] = lease.fencingToken();
                    leaseId[0] = lease.leaseId();
                    out.println("holding " + EventLines.encode(lease.leaseId()) + " " + lease.fencingToken());
                    long start = System.nanoTime();
                    while (holdNanos == 0 || System.nanoTime() - start < holdNanos) {
                        write(in, out, lease.leaseId(), lease.fencingToken(), lease.isValid());
                        Thread.sleep(10); // pacing the writes; interrupted when the lease is lost
                    }
                    return null;
                });
                out.println("finished");
            } catch (LeaseLostException e) {
                out.println("cancelled " + EventLines.encode(e.getMessage()));
                // a zombie that never looked: the resource must turn this write away by its token
                write(in, out, leaseId[0], token[0], false);
            }
        }
        out.println("done");
    }

    private static void write(BufferedReader in, PrintStream out, String leaseId, long token, boolean believedValid)
            throws java.io.IOException {
        out.println("write " + EventLines.encode(leaseId) + " " + token + " " + believedValid);
        String ack = in.readLine();
        if (ack == null || !ack.startsWith("ack")) {
            throw new IllegalStateException("the TCK stopped answering: " + ack);
        }
    }
}
