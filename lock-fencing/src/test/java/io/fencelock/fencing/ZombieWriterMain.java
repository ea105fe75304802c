package io.fencelock.fencing;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * The holder {@link ZombieWriter} runs in a child JVM: takes the lock with the real provider, then
 * writes to the fenced resource with its token every few milliseconds until told to stop, and never
 * looks at its lease again, as a process that was frozen and woke up would. Reads its instructions
 * (connection strings with credentials among them) on stdin, reports every write on stdout.
 */
public final class ZombieWriterMain {
    private ZombieWriterMain() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        LockClient.Builder locks = LockClient.builder();
        FencedTarget.Spec spec = null;
        String name = null;
        long ttlMillis = 0;
        for (String line; (line = in.readLine()) != null && !line.equals("go"); ) {
            String[] f = line.split(" ", 2);
            switch (f[0]) {
                case "lock" -> locks.uri(decode(f[1]));
                case "lockprop" -> {
                    String[] kv = f[1].split(" ");
                    locks.property(decode(kv[0]), decode(kv[1]));
                }
                case "target" -> spec = FencedTarget.Spec.decode(f[1]);
                case "hold" -> {
                    String[] nt = f[1].split(" ");
                    name = decode(nt[0]);
                    ttlMillis = Long.parseLong(nt[1]);
                }
                default -> throw new IllegalArgumentException("unknown instruction " + f[0]);
            }
        }
        Thread stop = new Thread(
                () -> {
                    try {
                        in.readLine(); // "stop", or the parent is gone
                    } catch (java.io.IOException ignored) {
                        // the parent is gone
                    }
                    System.exit(0);
                },
                "zombie-stop");
        stop.setDaemon(true);
        stop.start();
        LockOptions options = LockOptions.builder()
                .ttl(Duration.ofMillis(ttlMillis))
                .autoRenew(true)
                .build();
        try (LockClient client = locks.options(options).build();
                FencedTarget target = spec.open(true, false)) {
            Lease lease = client.acquire(name, Duration.ofSeconds(20)).orElseThrow();
            long token = lease.fencingToken();
            out.println("holding " + token);
            for (int seq = 0; ; seq++) {
                FencedTarget.Outcome o = target.write(token, "old-holder:" + seq);
                out.println("write " + seq + " " + o.kind() + " " + o.current() + " "
                        + Base64.getEncoder().encodeToString(o.detail().getBytes(StandardCharsets.UTF_8)));
                Thread.sleep(10); // pacing, not synchronization
            }
        }
    }

    static String decode(String field) {
        return new String(Base64.getDecoder().decode(field), StandardCharsets.UTF_8);
    }

    static String encode(String value) {
        return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    }
}
