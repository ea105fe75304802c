package io.fencelock.tck.matrix;

/**
 * Just enough of a JSON writer for the guarantee matrix (strings, booleans, numbers, nesting):
 * the TCK is a test dependency of third parties, so it does not pull in a JSON library for this.
 */
final class Json {
    private final StringBuilder out = new StringBuilder();
    private boolean needsComma;
    private boolean afterName;
    private int depth;

    Json beginObject() {
        open('{');
        return this;
    }

    Json endObject() {
        close('}');
        return this;
    }

    Json beginArray() {
        open('[');
        return this;
    }

    Json endArray() {
        close(']');
        return this;
    }

    Json name(String name) {
        comma();
        newline();
        string(name);
        out.append(": ");
        needsComma = false;
        afterName = true;
        return this;
    }

    Json field(String name, Object value) {
        name(name);
        return value(value);
    }

    Json value(Object value) {
        comma();
        lineUnlessNamed();
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean || value instanceof Number) {
            out.append(value);
        } else {
            string(value.toString());
        }
        needsComma = true;
        return this;
    }

    private void open(char c) {
        comma();
        lineUnlessNamed();
        out.append(c);
        depth++;
        needsComma = false;
    }

    private void close(char c) {
        depth--;
        newline();
        out.append(c);
        needsComma = true;
    }

    /** An array element starts a line of its own; a named value stays on its name's line. */
    private void lineUnlessNamed() {
        if (!afterName) {
            newline();
        }
        afterName = false;
    }

    private void comma() {
        if (needsComma) {
            out.append(',');
            newline();
        }
    }

    private void newline() {
        if (!out.isEmpty() && out.charAt(out.length() - 1) != '\n' && out.charAt(out.length() - 1) != ' ') {
            out.append('\n').append("  ".repeat(depth));
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    @Override
    public String toString() {
        return out + "\n";
    }
}
