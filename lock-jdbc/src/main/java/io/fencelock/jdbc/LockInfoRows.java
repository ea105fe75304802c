package io.fencelock.jdbc;

import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.MetadataCodec;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@link LockInfo}s from a query whose columns are, in order: the name, whether it is held
 * now, the lease id, the token, the expiry, the server's time, and the grant's metadata: owner,
 * lock type, data (JSON text of {@link MetadataCodec#encodeData}) and grant time. Lease id, expiry
 * and metadata are read only for a held lock: a free row keeps its last token but has no holder,
 * and an expired holder's metadata is no one's. Also binds metadata the way those columns hold it.
 */
public final class LockInfoRows {
    private LockInfoRows() {}

    /** Executes {@code ps} (its parameters bound) and reads every row. */
    public static List<LockInfo> read(PreparedStatement ps, SqlTime.Reader time) throws SQLException {
        List<LockInfo> infos = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                boolean held = rs.getBoolean(2);
                infos.add(new LockInfo(
                        rs.getString(1),
                        held,
                        held ? rs.getString(3) : null,
                        rs.getLong(4),
                        held ? time.read(rs, 5) : null,
                        time.read(rs, 6),
                        held ? metadata(rs.getString(7), rs.getString(8), rs.getString(9)) : LockMetadata.NONE,
                        held ? time.read(rs, 10) : null));
            }
        }
        return infos;
    }

    /**
     * What the owner, lock type and data columns hold for {@code metadata}, in that order: the
     * owner, the type and the data as JSON text, {@code null} (SQL NULL) for what is absent.
     */
    public static String[] metadataValues(LockMetadata metadata) {
        return new String[] {
            metadata.owner(),
            metadata.type(),
            metadata.data().isEmpty() ? null : MetadataCodec.encodeData(metadata.data())
        };
    }

    /** Binds {@link #metadataValues} as three parameters from {@code index} on; returns the next parameter's index. */
    public static int bindMetadata(PreparedStatement ps, int index, LockMetadata metadata) throws SQLException {
        for (String value : metadataValues(metadata)) {
            bindText(ps, index++, value);
        }
        return index;
    }

    /** Binds {@code value} as text, or SQL NULL when it is null. */
    public static void bindText(PreparedStatement ps, int index, String value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.VARCHAR);
        } else {
            ps.setString(index, value);
        }
    }

    /**
     * The metadata stored as owner, lock type and data columns ({@link #metadataValues}); a row edited by
     * hand past the rules reads as none rather than failing an inspect.
     */
    public static LockMetadata metadata(String owner, String type, String data) {
        if (owner == null && type == null && data == null) {
            return LockMetadata.NONE;
        }
        try {
            return new LockMetadata(owner, type, MetadataCodec.decodeData(data));
        } catch (IllegalArgumentException unreadable) {
            return LockMetadata.NONE;
        }
    }
}
