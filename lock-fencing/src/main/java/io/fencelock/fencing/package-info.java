/**
 * The resource side of fencing: guards that turn away writes carrying a token lower than one already
 * accepted: {@link io.fencelock.fencing.JdbcFence} (one conditional statement), {@link
 * io.fencelock.fencing.TableFence} (triggers on every write path), {@link io.fencelock.fencing.RedisFence}
 * (one Lua script), {@link io.fencelock.fencing.MongoFence} (one conditional update of the document) and {@link io.fencelock.fencing.TokenGuard} (tokens arriving over HTTP, gRPC or queues).
 */
package io.fencelock.fencing;
