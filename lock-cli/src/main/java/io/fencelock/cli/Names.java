package io.fencelock.cli;

import io.fencelock.LockMetadata;
import io.fencelock.LockNames;
import picocli.CommandLine;

/** The library's own rules for names, prefixes, types and owners, applied while parsing (before any I/O). */
final class Names {
    private Names() {}

    /** A lock name. */
    static final class Name implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            return check(() -> LockNames.requireValid(value));
        }
    }

    /** A lock name prefix (empty: every lock). */
    static final class Prefix implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            return check(() -> LockNames.requireValidPrefix(value));
        }
    }

    /** The optional PREFIX argument of the commands that read many locks. */
    static final class PrefixArgument {
        @CommandLine.Parameters(
                index = "0",
                arity = "0..1",
                paramLabel = "PREFIX",
                converter = Prefix.class,
                description = "a start of lock names (default: every lock)")
        String value = "";
    }

    /** A lock type, as {@link LockMetadata} accepts it. */
    static final class Type implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            return check(() -> LockMetadata.of(null, value, null).type());
        }
    }

    /** An owner description, as {@link LockMetadata} accepts it. */
    static final class Owner implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            return check(() -> LockMetadata.of(value, null, null).owner());
        }
    }

    private static String check(java.util.function.Supplier<String> rule) {
        try {
            return rule.get();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
