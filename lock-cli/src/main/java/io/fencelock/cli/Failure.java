package io.fencelock.cli;

/** A command's outcome other than success, with its exit code and a message for stderr (scrubbed when printed). */
final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    Failure(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
