package io.fencelock.mongo;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import io.fencelock.LockBackendException;
import io.fencelock.spi.Redaction;

/**
 * The driver's failures as {@link LockBackendException}s: whether the same call may succeed later,
 * and a message without credentials.
 */
final class MongoFailures {
    private MongoFailures() {}

    static LockBackendException failure(String operation, MongoException e, String where) {
        return failure(operation, e, where, null);
    }

    /** With the raw {@code uri} the client was made with, whose echoes in the driver's message are redacted. */
    static LockBackendException failure(String operation, MongoException e, String where, String uri) {
        return new LockBackendException(
                "MongoDB " + operation + " failed on " + where + ": "
                        + (e.getCode() == -1 ? "" : "[" + e.getCode() + "] ") + Redaction.message(e.getMessage(), uri),
                e,
                isRetryable(e));
    }

    /** Whether the same call may succeed later: the network, an election or a timeout, not a bug or bad credentials. */
    static boolean isRetryable(MongoException e) {
        return e instanceof MongoSocketException
                || e instanceof MongoTimeoutException
                || e instanceof MongoExecutionTimeoutException
                || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoWriteConcernException
                || e instanceof MongoInterruptedException
                || e instanceof MongoBulkWriteException bulk && bulk.getWriteConcernError() != null
                || e.hasErrorLabel("RetryableWriteError")
                || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
    }
}
