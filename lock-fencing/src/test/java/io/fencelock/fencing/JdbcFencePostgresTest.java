package io.fencelock.fencing;

class JdbcFencePostgresTest extends JdbcFenceContract {
    @Override
    FencedTarget.Kind kind() {
        return FencedTarget.Kind.HELPER_POSTGRES;
    }
}
