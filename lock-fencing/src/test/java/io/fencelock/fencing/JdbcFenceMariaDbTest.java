package io.fencelock.fencing;

class JdbcFenceMariaDbTest extends JdbcFenceContract {
    @Override
    FencedTarget.Kind kind() {
        return FencedTarget.Kind.HELPER_MYSQL;
    }
}
