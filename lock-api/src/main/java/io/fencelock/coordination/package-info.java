/**
 * Coordination built on the engine alone, so it works on every provider: {@link
 * io.fencelock.coordination.LeaderElection} (one leader per group, its work run under the
 * leadership lease and interrupted when the lease is lost) and {@link
 * io.fencelock.coordination.TaskSpreader} (a set of tasks spread evenly over the live instances,
 * each task under its own lock, orphans taken over by a monitor). Who holds what is published next
 * to each lock as an owner record, so that anyone can ask who leads or which instance runs which
 * task without taking part.
 */
package io.fencelock.coordination;
