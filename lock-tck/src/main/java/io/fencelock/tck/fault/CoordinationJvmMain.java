package io.fencelock.tck.fault;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.coordination.LeaderElection;
import io.fencelock.coordination.TaskSpreader;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.WarmUp;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A leader-election candidate or a task-spreading instance in a child JVM, run by
 * {@link CoordinationJvm} so that the TCK can kill or freeze it. Its work writes to the parent's
 * fenced resources without ever looking at its lease, as a zombie would, and says on stdout when
 * it gains, writes, is interrupted and steps down.
 */
public final class CoordinationJvmMain {
    private CoordinationJvmMain() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String uri = null;
        Map<String, String> properties = new HashMap<>();
        String[] role = null;
        for (String line; (line = in.readLine()) != null && !line.equals("start"); ) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "connection" -> uri = EventLines.decode(f[1]);
                case "property" -> properties.put(EventLines.decode(f[1]), EventLines.decode(f[2]));
                case "elect", "spread" -> role = f;
                default -> throw new IllegalArgumentException("unknown instruction " + f[0]);
            }
        }
        if (role == null) {
            throw new IllegalArgumentException("no role given");
        }
        Duration ttl = Duration.ofMillis(Long.parseLong(role[3]));
        LockOptions options = LockOptions.builder()
                .ttl(ttl)
                .autoRenew(true)
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(100))
                .build();
        WarmUp.warm(new ClientConnection(uri, properties).open(), EventLines.decode(role[1]), options);
        try (LockClient client = LockClient.create(new ClientConnection(uri, properties).open(), options)) {
            AutoCloseable running;
            if (role[0].equals("elect")) {
                running = LeaderElection.builder(client, EventLines.decode(role[1]))
                        .candidate(role[2])
                        .listener(new LeaderElection.Listener() {
                            @Override
                            public void gained(Lease lease) {
                                out.println("gained " + lease.fencingToken());
                            }

                            @Override
                            public void steppedDown(Lease lease, LeaderElection.StepDown why) {
                                out.println("stepped " + why);
                            }
                        })
                        .work(lease -> {
                            work(out, "leader", lease);
                            return null;
                        })
                        .build()
                        .start();
            } else {
                Set<String> tasks = new LinkedHashSet<>();
                for (int i = 0; i < Integer.parseInt(role[5]); i++) {
                    tasks.add("t" + i);
                }
                running = TaskSpreader.builder(client, EventLines.decode(role[1]))
                        .instance(role[2])
                        .ttl(ttl)
                        .monitorPeriod(Duration.ofMillis(Long.parseLong(role[4])))
                        .tasks(tasks)
                        .work((key, lease) -> work(out, key, lease))
                        .build()
                        .start();
            }
            out.println("started");
            // runs until the parent kills it, or closes stdin
            while (in.readLine() != null) {
                // nothing else to do
            }
            running.close();
        }
        out.println("done");
    }

    /** Writes with the lease's token every 10 ms, never checking the lease: the resource must fence it. */
    private static void work(PrintStream out, String resource, Lease lease) throws InterruptedException {
        out.println("running " + resource + " " + lease.fencingToken());
        try {
            while (true) {
                out.println("write " + resource + " " + lease.fencingToken());
                Thread.sleep(10); // pacing the writes; interrupted when the lease is lost
            }
        } catch (InterruptedException e) {
            out.println("interrupted " + resource + " " + lease.fencingToken());
            // a zombie that never looked: one more write with its old token, which must be turned away
            out.println("write " + resource + " " + lease.fencingToken());
            throw e;
        }
    }
}
