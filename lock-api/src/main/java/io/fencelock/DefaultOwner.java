package io.fencelock;

import java.net.InetAddress;

/** The default owner description: host name, process id and client id, e.g. {@code app-7/4711/fencelock-1}. */
final class DefaultOwner {
    private static final String HOST_AND_PID =
            hostName() + "/" + ProcessHandle.current().pid();

    private DefaultOwner() {}

    static String of(String clientId) {
        String owner = HOST_AND_PID + "/" + clientId;
        return owner.length() <= LockMetadata.MAX_OWNER_LENGTH
                ? owner
                : owner.substring(owner.length() - LockMetadata.MAX_OWNER_LENGTH);
    }

    /** The host's name without a DNS lookup where the environment says it (a lookup may take seconds). */
    private static String hostName() {
        String name = System.getenv("HOSTNAME");
        if (name == null || name.isBlank()) {
            name = System.getenv("COMPUTERNAME");
        }
        if (name == null || name.isBlank()) {
            try {
                name = InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException | RuntimeException e) {
                name = "unknown-host";
            }
        }
        StringBuilder clean = new StringBuilder();
        name.codePoints().filter(c -> !Character.isISOControl(c)).forEach(clean::appendCodePoint);
        return clean.toString();
    }
}
