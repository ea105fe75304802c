package io.fencelock;

/** Thrown by {@link LockClient#runExclusively} when the lease was lost while the task ran. */
public class LeaseLostException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient LeaseLoss loss;

    public LeaseLostException(LeaseLoss loss, Throwable taskFailure) {
        super(
                "lease " + loss.lease().leaseId() + " on '" + loss.lease().name() + "' was lost (" + loss.reason()
                        + ") while its task ran",
                taskFailure);
        this.loss = loss;
    }

    public LeaseLoss loss() {
        return loss;
    }
}
