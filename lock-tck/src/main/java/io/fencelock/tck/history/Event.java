package io.fencelock.tck.history;

/**
 * One recorded step of a history, stamped with {@link System#nanoTime()} (one monotonic clock for
 * every process of a run, as all run in one JVM or report through it).
 *
 * <p>An operation is an {@link Type#INVOKE} followed by one completion with the same
 * {@code opId}: {@link Type#OK} (it happened), {@link Type#FAIL} (it certainly did not) or
 * {@link Type#INFO} (unknown: it may or may not have happened). {@link Kind#LOST} is a single
 * {@code OK} event. Field meanings per kind:
 *
 * <table>
 *   <caption>the fields each kind of event carries</caption>
 *   <tr><th>kind</th><th>INVOKE</th><th>OK</th><th>FAIL</th></tr>
 *   <tr><td>ACQUIRE</td><td>name</td><td>leaseId, token, deadlineNanos (local validity deadline)</td><td>not acquired</td></tr>
 *   <tr><td>RENEW</td><td>name, leaseId</td><td>token, deadlineNanos (new deadline)</td><td>rejected</td></tr>
 *   <tr><td>RELEASE</td><td>name, leaseId</td><td>flag = freed on the backend</td><td>-</td></tr>
 *   <tr><td>WRITE</td><td>name, leaseId, token, flag = writer believed its lease valid</td><td>flag = accepted by the fenced resource</td><td>-</td></tr>
 *   <tr><td>LOST</td><td>-</td><td>name, leaseId (the lease was declared lost)</td><td>-</td></tr>
 *   <tr><td>PURGE</td><td>-</td><td>flag unused; records deleted in detail</td><td>-</td></tr>
 * </table>
 *
 * @param process       the client (thread of a schedule) that did it
 * @param opId          pairs an invocation with its completion; unique within a history
 * @param detail        free text for reports (exception, wait time...), never judged
 */
public record Event(
        int process,
        long opId,
        Type type,
        Kind kind,
        String name,
        String leaseId,
        long token,
        boolean flag,
        long deadlineNanos,
        long timeNanos,
        String detail) {

    public enum Type {
        INVOKE,
        OK,
        FAIL,
        INFO
    }

    public enum Kind {
        ACQUIRE,
        RENEW,
        RELEASE,
        WRITE,
        LOST,
        PURGE
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%12.3fms p%-2d #%-4d %-6s %-7s", timeNanos / 1e6, process, opId, type, kind));
        if (name != null) {
            sb.append(' ').append(name);
        }
        if (leaseId != null) {
            sb.append(" lease=").append(leaseId, 0, Math.min(8, leaseId.length()));
        }
        if (token != 0) {
            sb.append(" token=").append(token);
        }
        if (kind == Kind.RELEASE && type == Type.OK) {
            sb.append(" freed=").append(flag);
        }
        if (kind == Kind.WRITE) {
            sb.append(type == Type.INVOKE ? " believedValid=" : " accepted=").append(flag);
        }
        if (deadlineNanos != 0) {
            sb.append(String.format(" deadline=%.3fms", deadlineNanos / 1e6));
        }
        if (detail != null && !detail.isEmpty()) {
            sb.append(" (").append(detail).append(')');
        }
        return sb.toString();
    }
}
