package io.fencelock.testservers.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/** What every server started from local binaries needs: a port, its log's tail for errors, cleanup. */
public final class ThrowawayServers {
    private static final int TAIL_LINES = 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private ThrowawayServers() {}

    /**
     * A loopback port free right now (the server binds it a moment later), never one this JVM handed
     * out before and outside the range outgoing connections take theirs from: see {@link LoopbackPorts}.
     */
    public static int freeLoopbackPort() throws IOException {
        return LoopbackPorts.next();
    }

    /** A random password of 32 hex digits (so it needs no escaping) for a server the fixtures start. */
    public static String newPassword() {
        byte[] secret = new byte[16];
        RANDOM.nextBytes(secret);
        return HexFormat.of().formatHex(secret);
    }

    /** The last lines of a server's log, to put into a start-up failure's message. */
    public static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
        } catch (NoSuchFileException e) {
            return "(no log at " + file + ")";
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    /** Deletes a data directory and everything in it; a missing one is fine. */
    public static void deleteRecursively(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (NoSuchFileException e) {
            // already gone
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
