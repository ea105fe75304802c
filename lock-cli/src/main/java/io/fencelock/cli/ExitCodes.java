package io.fencelock.cli;

/**
 * The command line's exit codes, the same for every command (documented in the usage help and the
 * README), so that scripts can tell "nothing there" from "could not look".
 */
final class ExitCodes {
    /** Done. */
    static final int OK = 0;
    /** Not found or nothing to do: inspect of an unknown name, a forced release of a free lock. */
    static final int NOT_FOUND = 1;
    /** A usage error: unknown option, bad value (duration, name, property), found before any I/O. */
    static final int USAGE = 2;
    /** The backend could not be reached or failed. */
    static final int BACKEND = 3;
    /** The backend does not support the command (e.g. purge without PURGE_FREE). */
    static final int UNSUPPORTED = 4;

    static final String HELP = "%nExit codes: 0 ok; 1 not found or nothing to do; 2 usage error;"
            + " 3 backend unreachable or failed; 4 not supported by this backend.%n";

    private ExitCodes() {}
}
