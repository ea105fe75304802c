package io.fencelock.spi;

import io.fencelock.LockMetadata;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Lock metadata as one compact JSON object, for backends that store it as one string (a column, a
 * hash field, a key's value): {@code {"owner":"...","type":"...","data":{"k":"v"}}}, absent parts
 * left out. {@link #decode} reads what {@link #encode} wrote; a value it cannot read decodes to
 * {@link LockMetadata#NONE} rather than failing an inspect.
 */
public final class MetadataCodec {
    private MetadataCodec() {}

    /** The latest metadata encoded and its text: a client passes its one default metadata to nearly every grant. */
    private record Encoded(LockMetadata metadata, String json) {}

    private static volatile Encoded latest = new Encoded(LockMetadata.NONE, "{}");

    /** The JSON text; {@code "{}"} for {@link LockMetadata#NONE}. */
    public static String encode(LockMetadata metadata) {
        Encoded known = latest;
        if (known.metadata() == metadata) { // metadata is immutable: the same object encodes the same
            return known.json();
        }
        String json = encodeNew(metadata);
        latest = new Encoded(metadata, json);
        return json;
    }

    private static String encodeNew(LockMetadata metadata) {
        StringBuilder out = new StringBuilder("{");
        if (metadata.owner() != null) {
            field(out, "owner").append(quote(metadata.owner()));
        }
        if (metadata.type() != null) {
            field(out, "type").append(quote(metadata.type()));
        }
        if (!metadata.data().isEmpty()) {
            field(out, "data").append(encodeData(metadata.data()));
        }
        return out.append('}').toString();
    }

    /** A data map alone as a JSON object of strings. */
    public static String encodeData(Map<String, String> data) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, String> e : data.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            out.append(quote(e.getKey())).append(':').append(quote(e.getValue()));
        }
        return out.append('}').toString();
    }

    /** Reads {@link #encode}'s text; null, empty or unreadable text gives {@link LockMetadata#NONE}. */
    public static LockMetadata decode(String json) {
        if (json == null || json.isBlank()) {
            return LockMetadata.NONE;
        }
        try {
            Reader r = new Reader(json);
            String owner = null;
            String type = null;
            Map<String, String> data = Map.of();
            r.expect('{');
            if (!r.tryConsume('}')) {
                do {
                    String key = r.string();
                    r.expect(':');
                    switch (key) {
                        case "owner" -> owner = r.string();
                        case "type" -> type = r.string();
                        case "data" -> data = r.object();
                        default -> r.skipValue();
                    }
                } while (r.tryConsume(','));
                r.expect('}');
            }
            return new LockMetadata(owner, type, data);
        } catch (IllegalArgumentException | IndexOutOfBoundsException unreadable) {
            return LockMetadata.NONE;
        }
    }

    /** Reads {@link #encodeData}'s text; null or empty text gives an empty map. */
    public static Map<String, String> decodeData(String json) {
        if (json == null || json.isBlank()) {
            return Map.of();
        }
        try {
            return new LockMetadata(null, null, new Reader(json).object()).data();
        } catch (IllegalArgumentException | IndexOutOfBoundsException unreadable) {
            return Map.of();
        }
    }

    private static StringBuilder field(StringBuilder out, String name) {
        if (out.length() > 1) {
            out.append(',');
        }
        return out.append('"').append(name).append("\":");
    }

    /** {@code s} as a JSON string literal. */
    public static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** Just enough JSON for flat objects of strings. */
    private static final class Reader {
        private final String s;
        private int i;

        Reader(String s) {
            this.s = s;
        }

        void skipSpace() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        void expect(char c) {
            skipSpace();
            if (s.charAt(i) != c) {
                throw new IllegalArgumentException("expected " + c);
            }
            i++;
        }

        boolean tryConsume(char c) {
            skipSpace();
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'u' -> {
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    default -> out.append(e);
                }
            }
        }

        Map<String, String> object() {
            Map<String, String> out = new LinkedHashMap<>();
            expect('{');
            if (tryConsume('}')) {
                return out;
            }
            do {
                String key = string();
                expect(':');
                out.put(key, string());
            } while (tryConsume(','));
            expect('}');
            return out;
        }

        void skipValue() {
            skipSpace();
            char c = s.charAt(i);
            if (c == '"') {
                string();
            } else if (c == '{') {
                object();
            } else {
                while (i < s.length() && ",}".indexOf(s.charAt(i)) < 0) {
                    i++;
                }
            }
        }
    }
}
