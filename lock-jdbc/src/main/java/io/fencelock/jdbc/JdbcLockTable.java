package io.fencelock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** A dialect's lock table (and what goes with it: a sequence, a floor), created and checked at start-up. */
public interface JdbcLockTable {

    /** The table as SQL names it, quoted and qualified. */
    String qualifiedName();

    /** Creates what is absent; safe when several processes race. */
    void create(Connection c) throws SQLException;

    /** Checks what the statements rely on; throws an {@link IllegalStateException} saying what to fix. */
    void verify(Connection c) throws SQLException;
}
