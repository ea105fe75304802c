/**
 * The user API of fencelock: {@link io.fencelock.LockClient} (one per process and backend) hands out
 * {@link io.fencelock.Lease}s that carry a fencing token, renews them in the background, and says when
 * one is lost. The engine behind it (waiting with local wait lines and wake-ups, batched renewal,
 * local validity deadlines, sweeping of uncertain grants) is the same for every backend; see
 * docs/design.md for the semantics.
 */
package io.fencelock;
