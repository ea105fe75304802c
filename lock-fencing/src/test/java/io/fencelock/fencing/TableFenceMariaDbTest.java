package io.fencelock.fencing;

class TableFenceMariaDbTest extends TableFenceContract {
    @Override
    FencedTarget.Kind kind() {
        return FencedTarget.Kind.TRIGGER_MYSQL;
    }
}
