package io.fencelock.fencing;

class TableFencePostgresTest extends TableFenceContract {
    @Override
    FencedTarget.Kind kind() {
        return FencedTarget.Kind.TRIGGER_POSTGRES;
    }
}
