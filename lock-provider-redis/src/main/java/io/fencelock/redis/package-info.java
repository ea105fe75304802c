/**
 * The Redis provider: one Lua script per operation, a token counter that never expires, release
 * signalled by pub/sub; declares durability and linearizability only where the server gives them
 * (AOF with {@code appendfsync always}, a single server). See the module's README.
 */
package io.fencelock.redis;
