package io.fencelock.jdbc;

import io.fencelock.LockInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@link LockInfo}s from a query whose columns are, in order: the name, whether it is held
 * now, the lease id, the token, the expiry and the server's time. Lease id and expiry are read only
 * for a held lock: a free row keeps its last token but has no holder.
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
                        time.read(rs, 6)));
            }
        }
        return infos;
    }
}
